//! One rule per `NCCL_IB_*` variable (docs/verdicts.md "NCCL settings against the wire").
//! Sources: [NCCL-code] NVIDIA/nccl (`src/transport/net_ib.cc`, from 2.29
//! `src/transport/net_ib/`), [NCCL-env] its `docs/userguide/source/env.rst`, [mlx5-qp]
//! `drivers/infiniband/hw/mlx5/qp.c` `mlx5_set_path()`.

use super::check::{dur, Build, FlowFacts, VarCheck, Wire};
use super::env::{NcclEnv, NcclVersion};
use crate::psn::ack_timeout_ns;
use crate::report::Severity;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// How much longer than the ACK timeout a resend gap may be before it says the timeout is
/// longer: the timer fires late by scheduling slack (a factor chosen here, not a vendor
/// figure), and a gap also counts the time from the flow's last send to the lost packet's.
pub const TIMEOUT_SLACK: i64 = 4;

/// The variables checked, each with its rule, in the section's order.
const CHECKED: &[&str] = &[
    "NCCL_IB_TC",
    "NCCL_IB_FIFO_TC",
    "NCCL_IB_SL",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_QPS_PER_CONNECTION",
];

/// Every variable's check: the checked ones (TC, TIMEOUT, RETRY_CNT, GID_INDEX and
/// QPS_PER_CONNECTION always, their defaults when unset; FIFO_TC, SL, ROCE_VERSION_NUM and
/// ADDR_FAMILY when set), then the file's other `NCCL_IB_*` variables, not checked.
pub(super) fn all(env: &NcclEnv, w: &Wire<'_>) -> Vec<VarCheck> {
    let set = |n: &str| env.get(n).is_some_and(|v| !v.value.trim().is_empty());
    let mut out = vec![tc(env, w)];
    if set("NCCL_IB_FIFO_TC") {
        out.push(fifo_tc(env, w));
    }
    if set("NCCL_IB_SL") {
        out.push(sl(env, w));
    }
    out.push(timeout(env, w));
    out.push(retry_cnt(env, w));
    out.push(gid_index(env, w));
    if set("NCCL_IB_ROCE_VERSION_NUM") {
        out.push(roce_version(env, w));
    }
    if set("NCCL_IB_ADDR_FAMILY") {
        out.push(addr_family(env, w));
    }
    out.push(qps_per_connection(env, w));
    for v in env.vars.iter().filter(|v| !CHECKED.contains(&v.name.as_str())) {
        let mut c = VarCheck::new(env, &v.name);
        if c.value.is_none() {
            c.value = Some(String::new());
        }
        let (sets, why) = unchecked(&v.name);
        c.sets = sets.into();
        out.push(c.not_checked(why));
    }
    // A value NCCL's config file keeps quoted is read as NCCL reads it (a number is 0):
    // every verdict on it says so.
    for c in &mut out {
        if let Some(note) = env.get(&c.name).and_then(|v| v.conf_quote_note()) {
            c.reason = Some(match c.reason.take() {
                Some(r) => format!("{note}; {r}"),
                None => note,
            });
        }
    }
    out
}

/// What a variable without a rule sets, and why it is not checked [NCCL-env].
fn unchecked(name: &str) -> (&'static str, &'static str) {
    const NO_RULE: &str = "rocescope has no rule for it yet";
    match name {
        "NCCL_IB_HCA" => (
            "the NICs and ports NCCL uses",
            "which device sent a packet is not in the packet (its addresses are the host's)",
        ),
        "NCCL_IB_DISABLE" => {
            ("1: sockets instead of RoCE", "a capture with no RoCE shows it; no rule compares them yet")
        }
        "NCCL_IB_PCI_RELAXED_ORDERING" => {
            ("PCIe relaxed ordering for NIC writes", "it has no effect on the packets")
        }
        "NCCL_IB_USE_INLINE" => ("inline posting of small messages", "it has no effect on the packets"),
        "NCCL_IB_RETURN_ASYNC_EVENTS" => ("how NCCL reacts to NIC events", "it has no effect on the packets"),
        "NCCL_IB_ADAPTIVE_ROUTING" => {
            ("adaptive-routing mode: data as WRITEs plus a 0-byte WRITE with immediate", NO_RULE)
        }
        "NCCL_IB_AR_THRESHOLD" => ("the message size above which adaptive-routing mode applies", NO_RULE),
        "NCCL_IB_SPLIT_DATA_ON_QPS" => ("whether each message is split over a connection's QPs", NO_RULE),
        "NCCL_IB_ECE_ENABLE" => ("NIC-negotiated options (congestion control, selective repeat)", NO_RULE),
        "NCCL_IB_ADDR_RANGE" => ("the address range auto-selected GIDs must be in", NO_RULE),
        "NCCL_IB_PKEY" => ("the partition key index (BTH P_Key)", NO_RULE),
        "NCCL_IB_MERGE_NICS" => ("whether NCCL merges a NIC's ports into one device", NO_RULE),
        "NCCL_IB_OOO_RQ" => ("out-of-order receive queue use", NO_RULE),
        _ => ("(a variable rocescope does not know)", "no known effect on the packets"),
    }
}

/// The variable's value as a number, or the NCCL default (`None` when the file leaves it
/// empty or unset).
fn int(env: &NcclEnv, name: &str) -> Option<i64> {
    env.get(name).and_then(|v| v.int())
}

/// DSCPs of a mask, as `24, 26`.
fn list(mask: u64) -> String {
    let v: Vec<String> = (0..64u8).filter(|b| mask & (1 << b) != 0).map(|b| b.to_string()).collect();
    v.join(", ")
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// How flows' marks (DSCPs or PCPs, as bit masks) compare with the one expected.
struct Marks<'a> {
    /// Flows whose every packet carries the expected mark.
    only: u64,
    /// Flows with the expected mark and others, that also carry ACKs, NAKs or CNPs: those
    /// may have classes of their own (an ACK DSCP, the CNP DSCP), so their requests may be
    /// on the expected one.
    mixed: u64,
    /// Flows whose requests are on another mark: none of their packets carries the
    /// expected one, or all of them are requests and some carry another.
    wrong: Vec<&'a FlowFacts>,
    /// Every mark seen on the flows, and on how many flows each.
    seen: BTreeMap<u8, u64>,
}

/// Compare the marks `of` each flow with `expected`.
fn marks<'a>(flows: &[&'a FlowFacts], expected: u8, of: impl Fn(&FlowFacts) -> u64) -> Marks<'a> {
    let mut m = Marks { only: 0, mixed: 0, wrong: Vec::new(), seen: BTreeMap::new() };
    let bit = 1u64.checked_shl(u32::from(expected)).unwrap_or(0);
    for f in flows {
        let set = of(f);
        for b in 0..64u8 {
            if set & (1 << b) != 0 {
                *m.seen.entry(b).or_default() += 1;
            }
        }
        if set == bit {
            m.only += 1;
        } else if set & bit == 0 || f.pure {
            m.wrong.push(f);
        } else {
            m.mixed += 1;
        }
    }
    m
}

/// The mark most of the wrong flows carry (the lowest on a tie), other than `expected`.
fn commonest(wrong: &[&FlowFacts], expected: u8, of: impl Fn(&FlowFacts) -> u64) -> Option<u8> {
    let mut n: BTreeMap<u8, u64> = BTreeMap::new();
    for f in wrong {
        let set = of(f);
        for b in (0..64u8).filter(|b| *b != expected && set & (1 << b) != 0) {
            *n.entry(b).or_default() += 1;
        }
    }
    n.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(b, _)| *b)
}

/// `DSCP 26 on 12 flows, DSCP 48 on 2` and where: the points and priorities of the flows.
fn marks_text(kind: &str, m: &Marks<'_>, flows: &[&FlowFacts], w: &Wire<'_>) -> String {
    let seen: Vec<String> = m.seen.iter().map(|(d, n)| format!("{kind} {d} on {n}")).collect();
    let mut prios: Vec<u8> = flows.iter().filter_map(|f| f.priority).collect();
    prios.sort_unstable();
    prios.dedup();
    let mut points: Vec<u16> = flows.iter().map(|f| f.point).collect();
    points.sort_unstable();
    points.dedup();
    let names: Vec<String> =
        points.iter().filter_map(|p| w.report.points.get(usize::from(*p)).map(|x| x.name.clone())).collect();
    format!(
        "{} carrying requests: {} ({} {}; {} {})",
        plural(flows.len() as u64, "flow", "flows"),
        seen.join(", "),
        if prios.len() == 1 { "priority" } else { "priorities" },
        prios.iter().map(u8::to_string).collect::<Vec<_>>().join(","),
        if names.len() == 1 { "capture point" } else { "capture points" },
        names.join(", ")
    )
}

/// The ECN codepoints of the flows' packets.
fn ecn_text(flows: &[&FlowFacts]) -> String {
    let mut e = [0u64; 4];
    for f in flows {
        for (a, b) in e.iter_mut().zip(f.ecn) {
            *a += b;
        }
    }
    let [not_ect, ect1, ect0, ce] = e;
    format!("ECN on their packets: ECT(0) {ect0}, ECT(1) {ect1}, CE {ce}, Not-ECT {not_ect}")
}

/// What the two low bits of a traffic class do on the wire.
fn low_bits_note(tc: i64) -> Option<String> {
    match tc & 3 {
        0 => None,
        3 => Some("its low bits 11 are dropped by mlx5 (ECN comes from the NIC's congestion control) but sent as-is by NICs that pass the traffic class through, where 11 is CE on every packet (Intel irdma: uccl-project/uccl PR #780)".into()),
        b => Some(format!("its low bits {b:02b} are dropped by mlx5, which writes traffic_class >> 2 as the DSCP [mlx5-qp]: ECN comes from the NIC's congestion control, not from them")),
    }
}

/// A DSCP rule: the flows' DSCPs against `expected`; a mismatch suggests `dscp << 2`, `| 2`
/// when the file's low bits `low & 3` are `10`.
fn dscp_rule(
    mut c: VarCheck,
    w: &Wire<'_>,
    flows: &[&FlowFacts],
    expected: u8,
    low: i64,
    severity: Severity,
) -> VarCheck {
    if flows.is_empty() {
        let why = if w.all_flows == 0 {
            "the capture holds no RoCE flow".to_string()
        } else {
            format!("none of the capture's {} carries requests, whose DSCP the QP's traffic class sets (ACKs and CNPs may have classes of their own)", plural(w.all_flows, "flow", "flows"))
        };
        return c.not_checked(why);
    }
    let m = marks(flows, expected, |f| f.dscp);
    c.wire = format!("{}; {}", marks_text("DSCP", &m, flows, w), ecn_text(flows));
    c.checked = flows.len() as u64;
    if m.wrong.is_empty() {
        let note = (m.mixed > 0).then(|| {
            format!(
                "{} other DSCPs beside {expected} on ACKs, NAKs or CNPs, which NICs may mark with classes of their own (an ACK DSCP, the CNP DSCP): not judged",
                plural(m.mixed, "flow also carries", "flows also carry")
            )
        });
        return c.matched(note);
    }
    let would = commonest(&m.wrong, expected, |f| f.dscp).unwrap_or(0);
    c.evidence = m
        .wrong
        .iter()
        .take(3)
        .map(|f| f.evidence(format!("{}: DSCP {}", w.flow_name(f), list(f.dscp))))
        .collect();
    let why = format!(
        "{} of the {} carrying requests, from {}, are on DSCP {would} (not {expected}; the host may force the DSCP: MLNX_OFED's tc/1/traffic_class, Force DSCP){}",
        m.wrong.len(),
        plural(flows.len() as u64, "flow", "flows"),
        hosts(&m.wrong),
        others(&m.wrong, would, |f| f.dscp, "DSCP"),
    );
    // The file's low bits are kept only when they are 10 (ECT(0), a site convention such as
    // 106): 01 is ECT(1), and 11 is CE on every packet on NICs that pass them through.
    let value = ((i64::from(would) << 2) | if low & 3 == 2 { 2 } else { 0 }).to_string();
    minority(c, &m.wrong, flows, severity, why, value)
}

/// The marks of `flows` other than `main`, on how many of them: `; DSCP 48 also on 1 of
/// them` (empty when none).
fn others(flows: &[&FlowFacts], main: u8, of: impl Fn(&FlowFacts) -> u64, kind: &str) -> String {
    let mut n: BTreeMap<u8, u64> = BTreeMap::new();
    for f in flows {
        let set = of(f);
        for b in (0..64u8).filter(|b| *b != main && set & (1 << b) != 0) {
            *n.entry(b).or_default() += 1;
        }
    }
    let parts: Vec<String> = n.iter().map(|(b, c)| format!("{kind} {b} also on {c}")).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {} of them", parts.join(", "))
    }
}

/// The source hosts of `flows`: `10.0.0.1, 10.0.0.2` (the first four, then how many more).
fn hosts(flows: &[&FlowFacts]) -> String {
    let mut h: Vec<IpAddr> = flows.iter().filter_map(|f| f.src).collect();
    h.sort_unstable();
    h.dedup();
    let mut s: Vec<String> = h.iter().take(4).map(IpAddr::to_string).collect();
    if h.len() > 4 {
        s.push(format!("{} more", h.len() - 4));
    }
    s.join(", ")
}

/// A mismatch on `wrong` of the `all` flows checked. When every flow is wrong the hosts
/// agree on another value, and `value` would match it. When some flows fit the setting the
/// hosts disagree: the finding names the hosts that do not follow it and offers no value
/// (a majority's value would tell the others to follow a misconfigured host or switch);
/// when the wrong ones are fewer than half they may be other traffic, so it is context
/// (info).
fn minority(
    c: VarCheck,
    wrong: &[&FlowFacts],
    all: &[&FlowFacts],
    severity: Severity,
    why: String,
    value: String,
) -> VarCheck {
    if wrong.len() >= all.len() {
        return c.mismatch(severity, why, value);
    }
    let fit: Vec<&FlowFacts> =
        all.iter().copied().filter(|f| !wrong.iter().any(|w| std::ptr::eq(*w, *f))).collect();
    let severity = if wrong.len() * 2 >= all.len() { severity } else { Severity::Info };
    let (bad, good) = (hosts(wrong), hosts(&fit));
    let verb = |h: &str, one: &'static str, many: &'static str| if h.contains(", ") { many } else { one };
    let why = format!(
        "{why}; the hosts disagree: {bad} {} not follow {} and {} from {good} {} it (a host with another \
         setting, or other traffic)",
        verb(&bad, "does", "do"),
        c.setting(),
        plural(fit.len() as u64, "flow", "flows"),
        if fit.len() == 1 { "fits" } else { "fit" }
    );
    c.mismatch_hosts(severity, why)
}

/// NCCL_IB_TC: the traffic class NCCL puts in every QP's address vector
/// (`ah_attr.grh.traffic_class`, [NCCL-code] `ncclIbQpRtr`); mlx5 writes `traffic_class >>
/// 2` as the DSCP and drops the low two bits [mlx5-qp]. Default 0 [NCCL-env]; from 2.26 an
/// unset variable leaves it to the communicator's `trafficClass`, else 0 [NCCL-code]. From
/// 2.26 both QPs of a connection use the sender's value; the file is taken to be every
/// host's environment.
fn tc(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_TC");
    let given = int(env, "NCCL_IB_TC");
    let v = match given {
        // -1 is "unset" from 2.26 only; before, it goes into the uint8 field as 255.
        Some(-1) => {
            match env.version {
                Some(ver) if ver.at_least(2, 26) => {
                    c.sets = format!("nothing: in NCCL {ver} -1 leaves the class to the communicator's trafficClass, else 0");
                    return c.not_checked("the traffic class is the application's (ncclConfig_t.trafficClass), which the file does not give");
                }
                Some(_) => -1,
                None => {
                    c.sets = "from NCCL 2.26 nothing (-1 is unset: the communicator's trafficClass, else 0); before 2.26 traffic class 255 (-1 in the 8-bit field), DSCP 63; version unknown".into();
                    return c.not_checked("the two versions' readings differ, and the first is the application's class, which the file does not give: give the version (--nccl-version)");
                }
            }
        }
        Some(v) => v,
        None => 0,
    };
    let byte = v & 0xFF;
    let dscp = (byte >> 2) as u8;
    let mut sets =
        format!("DSCP {dscp} ({byte} >> 2; the IP TOS byte is DSCP << 2 | ECN); ECN bits from the NIC");
    if v > 255 {
        sets.push_str(&format!("; {v} does not fit the 8-bit traffic class, whose field keeps {byte}"));
    } else if v < 0 {
        let unset = if v == -1 { " (-1 is unset only from 2.26)" } else { "" };
        sets.push_str(&format!("; {v} wraps to {byte} in the 8-bit traffic class{unset}"));
    }
    if given.is_none() {
        sets.push_str(
            " (NCCL's default 0; from 2.26 the communicator's trafficClass if the application sets one)",
        );
    }
    if let Some(n) = low_bits_note(byte) {
        sets.push_str(&format!("; {n}"));
    }
    c.sets = sets;
    // With NCCL_IB_FIFO_TC set, the receiver's side (CTS writes) is its business.
    let fifo = int(env, "NCCL_IB_FIFO_TC").is_some_and(|f| f != -1);
    let flows: Vec<&FlowFacts> = w.flows.iter().filter(|f| !(fifo && receiver_side(w, f))).collect();
    // An unset variable claims little (the application or the host may set the class).
    let severity = if given.is_some() { Severity::Warning } else { Severity::Info };
    dscp_rule(c, w, &flows, dscp, byte, severity)
}

/// The flow is the lighter direction of a paired connection: the receiver's CTS writes
/// (and ACKs), NCCL's "FIFO" side.
fn receiver_side(w: &Wire<'_>, f: &FlowFacts) -> bool {
    f.partner.and_then(|p| w.flow(p)).is_some_and(|p| f.payload_bytes < p.payload_bytes)
}

/// NCCL_IB_FIFO_TC (since 2.22.3 [NCCL-env]): the traffic class of the receiver's QPs, which
/// carry the CTS ("FIFO") RDMA writes; from 2.24 every receiver QP when set, in 2.22–2.23
/// only the first [NCCL-code]. Checked on the lighter direction of each paired connection.
fn fifo_tc(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_FIFO_TC");
    let v = int(env, "NCCL_IB_FIFO_TC").unwrap_or(-1);
    // -1 is unset (from 2.24, where the rule applies); other negatives wrap to the uint8.
    if v == -1 {
        c.sets = "nothing: -1 is unset, the receiver's QPs use NCCL_IB_TC".into();
        return c.not_checked("unset");
    }
    let byte = v & 0xFF;
    c.sets = format!("DSCP {} on the receiver's QPs (CTS writes, and probably their ACKs)", byte >> 2);
    match env.version {
        Some(ver) if !ver.at_least(2, 22) => {
            return c.not_checked(format!("NCCL {ver} has no NCCL_IB_FIFO_TC (since 2.22.3)"))
        }
        Some(ver) if !ver.at_least(2, 24) => {
            return c.not_checked(format!(
            "in NCCL {ver} it applies to one QP of each connection only, which the capture cannot single out"
        ))
        }
        _ => {}
    }
    let flows: Vec<&FlowFacts> = w.flows.iter().filter(|f| receiver_side(w, f)).collect();
    if flows.is_empty() {
        return c
            .not_checked("no paired connection whose lighter direction carries requests (the CTS writes)");
    }
    dscp_rule(c, w, &flows, (byte >> 2) as u8, byte, Severity::Warning)
}

/// NCCL_IB_SL: the service level, which mlx5 writes as the 802.1Q priority (`eth_prio = sl &
/// 7`) [mlx5-qp]: the PCP of VLAN-tagged frames. Untagged frames carry none.
fn sl(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_SL");
    let Some(v) = int(env, "NCCL_IB_SL").filter(|v| *v >= 0) else {
        c.sets = "nothing: -1 is unset (0, or the communicator's trafficClass from 2.26)".into();
        return c.not_checked("unset");
    };
    let pcp = (v & 7) as u8;
    c.sets = format!("PCP {pcp} on VLAN-tagged frames (SL & 7)");
    let flows: Vec<&FlowFacts> = w.flows.iter().filter(|f| f.pcp != 0).collect();
    if flows.is_empty() {
        return c.not_checked(
            "the RoCE requests carry no VLAN tag, so no PCP (with DSCP trust the switch ignores it anyway)",
        );
    }
    let m = marks(&flows, pcp, |f| u64::from(f.pcp));
    c.wire = marks_text("PCP", &m, &flows, w);
    c.checked = flows.len() as u64;
    if m.wrong.is_empty() {
        return c.matched(None);
    }
    let would = commonest(&m.wrong, pcp, |f| u64::from(f.pcp)).unwrap_or(0);
    c.evidence = m
        .wrong
        .iter()
        .take(3)
        .map(|f| f.evidence(format!("{}: PCP {}", w.flow_name(f), list(u64::from(f.pcp)))))
        .collect();
    let why = format!(
        "{} of the {} tagged flows carrying requests, from {}, are on PCP {would} (not {pcp}; a NIC set to trust DSCP may set the PCP from the DSCP instead){}",
        m.wrong.len(),
        flows.len(),
        hosts(&m.wrong),
        others(&m.wrong, would, |f| u64::from(f.pcp), "PCP"),
    );
    minority(c, &m.wrong, &flows, Severity::Warning, why, would.to_string())
}

/// NCCL_IB_TIMEOUT's defaults by version [NCCL-code tags, NCCL-env]: 14 before 2.14, 18 from
/// 2.14, 20 from 2.23. `None`: the version is unknown.
fn timeout_default(v: Option<NcclVersion>) -> Option<i64> {
    v.map(|v| {
        if v.at_least(2, 23) {
            20
        } else if v.at_least(2, 14) {
            18
        } else {
            14
        }
    })
}

/// The exponent NCCL_IB_TIMEOUT gives (or its default: the largest, 20, when the version is
/// unknown), and its words. `None`: an infinite timeout (0, or 32 and above [NCCL-env]).
fn timeout_exponent(env: &NcclEnv) -> (Option<i64>, String) {
    let given = int(env, "NCCL_IB_TIMEOUT");
    let (t, whose) = match (given, timeout_default(env.version)) {
        (Some(t), _) => (t, String::new()),
        (None, Some(d)) => (d, format!(" (NCCL {}'s default)", env.version.map_or_else(String::new, |v| v.to_string()))),
        (None, None) => (20, " (the default: 20 since NCCL 2.23, 18 from 2.14, 14 before; version unknown, so the checks hold against each)".to_string()),
    };
    if t <= 0 || t >= 32 {
        return (
            None,
            format!("an infinite ACK timeout ({t}: 0 and 32 or more are infinite [NCCL-env]){whose}"),
        );
    }
    (
        Some(t),
        format!(
            "ACK timeout {} (4.096 µs × 2^{t}, the QP's Local ACK Timeout){whose}",
            dur(ack_timeout_ns(t as u8))
        ),
    )
}

/// NCCL_IB_TIMEOUT: the QP's Local ACK Timeout exponent, 4.096 µs × 2^n [NCCL-env], passed
/// unchanged to the QP (`qpAttr.timeout`, [NCCL-code] `ncclIbQpRts`). A resend with no NAK
/// before it follows a timeout; ConnectX adaptive retransmission resends sooner than the
/// timeout, capped by it (NVIDIA "Adaptive Retransmission": "Maximum timeout is capped by
/// QP.ack_timeout"), so a gap shorter than the timeout is normal, and only a gap longer than
/// [`TIMEOUT_SLACK`] timeouts says the timeout is longer than set.
fn timeout(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_TIMEOUT");
    let (t, sets) = timeout_exponent(env);
    c.sets = sets;
    if w.sampled() {
        return c.not_checked("a sampled capture: resends and their gaps need every packet");
    }
    let flows: Vec<&FlowFacts> = w.flows.iter().filter(|f| f.resend_gaps > 0).collect();
    if flows.is_empty() {
        return c.not_checked("no resend without a NAK before it in the capture: the ACK timer never showed");
    }
    let passes: u64 = flows.iter().map(|f| f.resend_gaps).sum();
    let min = flows.iter().filter_map(|f| f.gap_min).min().unwrap_or(0);
    let Some(worst) = flows.iter().max_by_key(|f| f.gap_max.unwrap_or(0)) else { return c };
    let max = worst.gap_max.unwrap_or(0);
    c.checked = flows.len() as u64;
    let after = if dur(min) == dur(max) { dur(max) } else { format!("{} to {}", dur(min), dur(max)) };
    c.wire = format!(
        "{} with no NAK before {} on {}, after {after} without a new packet",
        plural(passes, "resend", "resends"),
        if passes == 1 { "it" } else { "them" },
        plural(flows.len() as u64, "flow", "flows"),
    );
    let Some(t) = t else {
        return c.not_checked("with an infinite timeout the QP never resends on its own: these resends follow NAKs the capture lacks, or the timeout is not infinite; the capture cannot tell which");
    };
    let timeout = ack_timeout_ns(t as u8);
    if max > TIMEOUT_SLACK * timeout {
        // The timer fired after the timeout: the timeout that fits is the longest not past
        // the gap.
        let fits = (max / 4096).max(1).ilog2().clamp(1, 31);
        let frame = worst.gap_max_frame.unwrap_or(worst.first_frame);
        c.evidence = vec![crate::report::EvidenceRef {
            frame,
            ts_ns: 0,
            what: format!("{}: resent after {} with no NAK", w.flow_name(worst), dur(max)),
        }];
        let why = format!(
            "a resend came {} after the flow's last packet, more than {TIMEOUT_SLACK} × the {} the setting gives: the QP's timeout is longer (another setting, or the host's)",
            dur(max),
            dur(timeout)
        );
        return c.mismatch(Severity::Warning, why, fits.to_string());
    }
    let note = (min < timeout).then(|| {
        format!(
            "resends sooner than the {} timeout are adaptive retransmission (ConnectX resends early, capped by the timeout): normal",
            dur(timeout)
        )
    });
    c.matched(note)
}

/// NCCL_IB_RETRY_CNT: the QP's retry count, 0-7, default 7 [NCCL-env]: how many times the
/// requester resends one PSN (after a Local ACK timeout, a NAK-sequence error or an implied
/// NAK: NVIDIA WinOF-2 "RDMA capabilities") before the QP fails with IBV_WC_RETRY_EXC_ERR.
/// With adaptive retransmission a QP may resend more often, but fails when nothing moves
/// for `ack_timeout × retry count` (NVIDIA "Adaptive Retransmission"): more retries than
/// the count over a longer time than that contradicts the setting.
fn retry_cnt(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_RETRY_CNT");
    let r = int(env, "NCCL_IB_RETRY_CNT").unwrap_or(7);
    let (t, _) = timeout_exponent(env);
    c.sets = format!(
        "{} of one PSN before the QP fails (retry count {r}{})",
        plural(u64::try_from(r).unwrap_or(0), "resend", "resends"),
        if c.value.is_none() { ", NCCL's default" } else { "" }
    );
    if !(0..=7).contains(&r) {
        c.sets = format!("nothing the QP takes: the retry count is 0-7 [NCCL-env], {r} is not");
        return c.not_checked("outside 0-7");
    }
    if w.sampled() {
        return c.not_checked("a sampled capture: resends need every packet");
    }
    let Some(worst) = w.flows.iter().filter(|f| f.retries > 0).max_by_key(|f| (f.retries, f.retries_span))
    else {
        return c.not_checked("no resend in the capture: no retry to count");
    };
    let k = i64::from(worst.retries);
    c.checked = w.flows.iter().filter(|f| f.retries > 0).count() as u64;
    c.wire = format!(
        "at most {} of one PSN with no progress between ({}, over {})",
        plural(k as u64, "resend", "resends"),
        w.flow_name(worst),
        dur(worst.retries_span)
    );
    if k <= r {
        return c.matched(None);
    }
    // The whole budget: r timeouts (infinite with an infinite timeout).
    let budget = t.map(|t| r.saturating_mul(ack_timeout_ns(t as u8)));
    match budget {
        Some(b) if worst.retries_span > b => {
            c.evidence = vec![crate::report::EvidenceRef {
                frame: worst.retries_frame.unwrap_or(worst.first_frame),
                ts_ns: 0,
                what: format!("{}: resend {k} of one PSN, {} after its last progress", w.flow_name(worst), dur(worst.retries_span)),
            }];
            let why = format!(
                "one PSN was resent {k} times over {}, past {r} retries of the {} timeout: the QP's retry count is higher",
                dur(worst.retries_span),
                t.map_or_else(String::new, |t| dur(ack_timeout_ns(t as u8)))
            );
            // A lower bound: the wire shows at least k retries, any count from k up fits it.
            let fits = if k > 7 {
                "7 (the most there is; more resends mean adaptive retransmission or another timeout)".to_string()
            } else {
                format!("{k} or more (at least {k} retries seen; NCCL's default is 7)")
            };
            c.mismatch(Severity::Warning, why, fits)
        }
        _ => c.matched(Some(format!(
            "{k} resends is more than {r}, but within {r} × the ACK timeout: adaptive retransmission resends more often within the same budget"
        ))),
    }
}

/// How a flow's frames were sent: RoCE version, IP family, link-local GID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Kind {
    v2: bool,
    ipv6: bool,
    link_local: bool,
}

impl Kind {
    fn of(f: &FlowFacts) -> Option<Kind> {
        let src = f.src?;
        let (ipv6, link_local) = match src {
            IpAddr::V4(_) => (false, false),
            IpAddr::V6(a) => (true, a.segments().first().is_some_and(|s| s & 0xffc0 == 0xfe80)),
        };
        Some(Kind { v2: f.v2, ipv6, link_local })
    }

    fn text(self) -> String {
        let fam = match (self.ipv6, self.link_local) {
            (false, _) => "IPv4",
            (true, true) => "IPv6 link-local (fe80::)",
            (true, false) => "IPv6",
        };
        if self.v2 {
            format!("RoCEv2 over {fam}")
        } else {
            format!("RoCEv1 with {fam} GIDs")
        }
    }

    /// Its index on a typical mlx5 GID table of a port with one IPv4 address and no VLAN:
    /// 0 fe80 v1, 1 fe80 v2, 2 IPv4 v1, 3 IPv4 v2 (NVIDIA MLNX_OFED "RDMA over Converged
    /// Ethernet"; indices shift with more addresses, VLANs and containers).
    fn typical_index(self) -> Option<i64> {
        match (self.ipv6, self.link_local, self.v2) {
            (true, true, false) => Some(0),
            (true, true, true) => Some(1),
            (false, _, false) => Some(2),
            (false, _, true) => Some(3),
            _ => None,
        }
    }
}

/// The kinds of the flows and how many flows each.
fn kinds(w: &Wire<'_>) -> BTreeMap<Kind, u64> {
    let mut k = BTreeMap::new();
    for f in &w.flows {
        if let Some(x) = Kind::of(f) {
            *k.entry(x).or_default() += 1;
        }
    }
    k
}

fn kinds_text(k: &BTreeMap<Kind, u64>) -> String {
    k.iter()
        .map(|(x, n)| format!("{} on {}", x.text(), plural(*n, "flow", "flows")))
        .collect::<Vec<_>>()
        .join(", ")
        + " carrying requests"
}

/// The GID index of a kind on a typical table, as a value that would match.
fn typical_would(k: Kind) -> String {
    k.typical_index().map_or_else(
        || format!("the index that gives {} (show_gids)", k.text()),
        |n| format!("{n} (on a typical table; show_gids names the index that gives {})", k.text()),
    )
}

/// A mismatch of the flows whose kind does not `fit` (info: the GID table is the host's),
/// `why` after their kind; `would` names the value that fits the commonest of them.
fn kind_mismatch(
    mut c: VarCheck,
    w: &Wire<'_>,
    fits: impl Fn(Kind) -> bool,
    why: &str,
    would: impl Fn(Kind) -> String,
) -> VarCheck {
    let all: Vec<&FlowFacts> = w.flows.iter().filter(|f| Kind::of(f).is_some()).collect();
    let total = all.len();
    let wrong: Vec<&FlowFacts> = w.flows.iter().filter(|f| Kind::of(f).is_some_and(|k| !fits(k))).collect();
    let mut by: BTreeMap<Kind, u64> = BTreeMap::new();
    let mut seen = Vec::new();
    for f in &wrong {
        if let Some(k) = Kind::of(f) {
            *by.entry(k).or_default() += 1;
            if !seen.contains(&k) {
                seen.push(k);
                c.evidence.push(f.evidence(format!("{}: {}", w.flow_name(f), k.text())));
            }
        }
    }
    let Some(dom) = by.iter().max_by_key(|(_, n)| **n).map(|(k, _)| *k) else { return c.matched(None) };
    let text = format!(
        "{} of the {} carrying requests, from {}, are {}, {why}",
        wrong.len(),
        plural(total as u64, "flow", "flows"),
        hosts(&wrong),
        dom.text()
    );
    minority(c, &wrong, &all, Severity::Info, text, would(dom))
}

/// Whether NCCL auto-selects the GID (NCCL_IB_GID_INDEX -1, the default from 2.21.5
/// [NCCL-code tags]): `None` when the version is unknown and the index unset.
fn auto_gid(env: &NcclEnv) -> Option<bool> {
    match int(env, "NCCL_IB_GID_INDEX") {
        Some(i) => Some(i < 0),
        None => env.version.map(|v| v.at_least(2, 21)),
    }
}

/// NCCL_IB_GID_INDEX: the GID table entry the QPs use, whose type (RoCE v1 or v2) and
/// address (IPv4-mapped, IPv6, link-local) decide the frames (NVIDIA MLNX_OFED "RDMA over
/// Converged Ethernet"). The index is not on the wire: an explicit one is read against a
/// typical mlx5 table (info at most); unset from 2.21 (or -1) NCCL picks a RoCE v2
/// (NCCL_IB_ROCE_VERSION_NUM) GID of family AF_INET (NCCL_IB_ADDR_FAMILY) [NCCL-code
/// `ncclIbGetGidIndex`], before 2.21 index 0.
fn gid_index(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_GID_INDEX");
    let k = kinds(w);
    if !k.is_empty() {
        c.wire = kinds_text(&k);
        c.checked = k.values().sum();
    }
    let explicit = int(env, "NCCL_IB_GID_INDEX").filter(|i| *i >= 0);
    let typical = |i: i64| -> Option<Kind> {
        [
            (0, Kind { v2: false, ipv6: true, link_local: true }),
            (1, Kind { v2: true, ipv6: true, link_local: true }),
            (2, Kind { v2: false, ipv6: false, link_local: false }),
            (3, Kind { v2: true, ipv6: false, link_local: false }),
        ]
        .into_iter()
        .find(|(n, _)| *n == i)
        .map(|(_, k)| k)
    };
    let against_index = |mut c: VarCheck, i: i64, why_index: &str| -> VarCheck {
        let Some(want) = typical(i) else {
            c.sets = format!("GID table entry {i}{why_index}: beyond a typical table's four entries");
            return c.not_checked("the index's GID type and address are in the host's GID table (show_gids), not in the capture");
        };
        c.sets = format!("GID table entry {i}{why_index}: {} on a typical mlx5 table (one IPv4 address, no VLAN: 0 fe80 v1, 1 fe80 v2, 2 IPv4 v1, 3 IPv4 v2)", want.text());
        if k.is_empty() {
            return c.not_checked("no RoCE flow carrying requests");
        }
        if k.keys().all(|x| *x == want) {
            return c.matched(Some(
                "the index itself is not on the wire: the host's table (show_gids) says what it holds".into(),
            ));
        }
        kind_mismatch(c, w, |x| x == want, &format!("not {}", want.text()), typical_would)
    };
    if let Some(i) = explicit {
        return against_index(c, i, "");
    }
    // What auto-selection prefers: only the parts no variable of their own sets are judged
    // here (NCCL_IB_ROCE_VERSION_NUM and NCCL_IB_ADDR_FAMILY judge theirs).
    let v_set = env.get("NCCL_IB_ROCE_VERSION_NUM").is_some_and(|v| v.int().is_some());
    let f_set = env.get("NCCL_IB_ADDR_FAMILY").is_some_and(|v| !v.value.trim().is_empty());
    let auto_sets = "auto-selection: a RoCE v2 GID (NCCL_IB_ROCE_VERSION_NUM, default 2) of family AF_INET (NCCL_IB_ADDR_FAMILY) that is not link-local";
    match auto_gid(env) {
        Some(false) => against_index(c, 0, " (NCCL's default before 2.21)"),
        auto => {
            c.sets = match auto {
                Some(_) => format!("{auto_sets} [NCCL-code ncclIbGetGidIndex]"),
                None => format!("{auto_sets} from NCCL 2.21 (-1, the default); index 0 before (RoCEv1 link-local on a typical mlx5 table); version unknown"),
            };
            if k.is_empty() {
                return c.not_checked("no RoCE flow carrying requests");
            }
            if v_set && f_set {
                return c.not_checked("NCCL_IB_ROCE_VERSION_NUM and NCCL_IB_ADDR_FAMILY are set: their checks judge the auto-selection");
            }
            let fits = |x: Kind| (v_set || x.v2) && (f_set || !x.ipv6) && !x.link_local;
            let old = |x: Kind| !x.v2 && x.link_local;
            if k.keys().all(|x| fits(*x)) {
                return c.matched(
                    auto.is_none().then(|| "the frames fit NCCL ≥ 2.21's auto-selection".to_string()),
                );
            }
            if auto.is_none() && k.keys().all(|x| old(*x)) {
                return c.matched(Some(
                    "the frames fit index 0 on a typical mlx5 table: NCCL before 2.21".into(),
                ));
            }
            kind_mismatch(
                c,
                w,
                fits,
                "which auto-selection picks only when the port has no other GID",
                typical_would,
            )
        }
    }
}

/// NCCL_IB_ROCE_VERSION_NUM (since 2.21, default 2 [NCCL-env]): the RoCE version of the GID
/// auto-selection prefers. Judged only when the GID is auto-selected.
fn roce_version(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_ROCE_VERSION_NUM");
    let v = int(env, "NCCL_IB_ROCE_VERSION_NUM").unwrap_or(2);
    c.sets = format!("RoCE v{v} GIDs preferred when NCCL picks the GID");
    if let Some(why) = no_auto(env) {
        return c.not_checked(why);
    }
    if !(1..=2).contains(&v) {
        return c.not_checked(format!("{v} is no RoCE version (1 or 2)"));
    }
    let k = kinds(w);
    if k.is_empty() {
        return c.not_checked("no RoCE flow carrying requests");
    }
    c.wire = kinds_text(&k);
    c.checked = k.values().sum();
    let fits = |x: Kind| x.v2 == (v == 2);
    if k.keys().all(|x| fits(*x)) {
        return c.matched(None);
    }
    let why = format!("which NCCL picks only when the port has no v{v} GID of the family");
    kind_mismatch(c, w, fits, &why, |k| if k.v2 { "2".into() } else { "1".into() })
}

/// NCCL_IB_ADDR_FAMILY (since 2.21, default AF_INET [NCCL-env]): the address family of the
/// GID auto-selection prefers. Judged only when the GID is auto-selected.
fn addr_family(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_ADDR_FAMILY");
    let v6 = c.value.as_deref() == Some("AF_INET6");
    c.sets = format!("{} GIDs preferred when NCCL picks the GID", if v6 { "IPv6" } else { "IPv4" });
    if let Some(why) = no_auto(env) {
        return c.not_checked(why);
    }
    let k = kinds(w);
    if k.is_empty() {
        return c.not_checked("no RoCE flow carrying requests");
    }
    c.wire = kinds_text(&k);
    c.checked = k.values().sum();
    let fits = |x: Kind| x.ipv6 == v6 && !x.link_local;
    if k.keys().all(|x| fits(*x)) {
        return c.matched(None);
    }
    let why = "which NCCL picks only when the port has no GID of the family (a link-local one never)";
    kind_mismatch(c, w, fits, why, |k| if k.ipv6 { "AF_INET6".into() } else { "AF_INET".into() })
}

/// Why NCCL does not auto-select the GID, if it does not.
fn no_auto(env: &NcclEnv) -> Option<String> {
    if let Some(i) = int(env, "NCCL_IB_GID_INDEX").filter(|i| *i >= 0) {
        return Some(format!("NCCL_IB_GID_INDEX={i} is set, so NCCL picks no GID itself"));
    }
    env.version
        .filter(|v| !v.at_least(2, 21))
        .map(|v| format!("NCCL {v} has no GID auto-selection (since 2.21)"))
}

/// A capture point and a direction of a host pair: the connecting (sending) host, then the
/// receiving one.
type HostPair = (u16, IpAddr, IpAddr);

/// The direction of a connection (QP pair) as NCCL made it, sender first: the direction of
/// its heavier flow carrying requests (the data; the lighter one is the receiver's CTS
/// writes, as [`receiver_side`] reads it), `a` → `b` on a tie. With the flow carrying
/// requests there first (`None` when neither direction carries any).
fn sender_direction(w: &Wire<'_>, conn: &crate::report::Connection) -> Option<(HostPair, usize)> {
    let mut heavy: Option<&FlowFacts> = None;
    for f in conn.flows.iter().filter_map(|id| w.flow(*id)) {
        if heavy.is_none_or(|h| f.payload_bytes > h.payload_bytes) {
            heavy = Some(f);
        }
    }
    let first = conn.flows.iter().find(|id| w.flow(**id).is_some()).copied()?;
    let h = heavy?;
    let (s, d) = match (h.src, h.dst) {
        (Some(s), Some(d)) => (s, d),
        _ => (conn.a, conn.b),
    };
    Some(((conn.point, s, d), first))
}

/// Greatest common divisor.
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// NCCL_IB_QPS_PER_CONNECTION (since 2.10, 1-128, default 1 [NCCL-env]): the QPs of each
/// connection between two ranks; each direction of a host pair (the connecting, sending
/// side to the receiver) has channels × that × merged NICs of them [NCCL-code
/// `connect.cc`], so its QP pairs are a multiple of the setting. Counted per capture point
/// and direction ([`sender_direction`]): connections (QP pairs) of which a direction
/// carries requests. Counted per unordered pair, traffic both ways would double every
/// count (2 + 2 QP pairs "fitting" 4). QPs idle for the whole capture are not seen: a
/// warning at most.
fn qps_per_connection(env: &NcclEnv, w: &Wire<'_>) -> VarCheck {
    let mut c = VarCheck::new(env, "NCCL_IB_QPS_PER_CONNECTION");
    let q = int(env, "NCCL_IB_QPS_PER_CONNECTION").unwrap_or(1);
    c.sets = format!(
        "{} per connection between two ranks{}: each direction of a host pair has channels × {q} QPs (× merged NICs)",
        plural(u64::try_from(q).unwrap_or(0), "QP", "QPs"),
        if c.value.is_none() { " (NCCL's default)" } else { "" }
    );
    if !(1..=128).contains(&q) {
        return c.not_checked(format!("{q} is outside NCCL's 1-128"));
    }
    if w.sampled() {
        return c.not_checked("a sampled capture may miss QPs");
    }
    let mut pairs: BTreeMap<HostPair, (u64, Option<usize>)> = BTreeMap::new();
    for conn in w.connections {
        let Some((dir, first)) = sender_direction(w, conn) else { continue };
        let e = pairs.entry(dir).or_insert((0, Some(first)));
        e.0 += 1;
    }
    if pairs.is_empty() {
        return c.not_checked("no connection carrying requests");
    }
    let counts: Vec<u64> = pairs.values().map(|p| p.0).collect();
    let mut by_count: BTreeMap<u64, u64> = BTreeMap::new();
    for n in &counts {
        *by_count.entry(*n).or_default() += 1;
    }
    c.checked = pairs.len() as u64;
    c.wire = format!(
        "{} per direction (sender → receiver): {}",
        "QP pairs carrying requests",
        by_count
            .iter()
            .map(|(n, p)| format!("{n} on {}", plural(*p, "pair", "pairs")))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let q = q as u64;
    let odd: Vec<(&HostPair, &(u64, Option<usize>))> =
        pairs.iter().filter(|(_, (n, _))| n % q != 0).collect();
    if odd.is_empty() {
        return c.matched((q > 1).then(|| format!("every host-pair direction has a multiple of {q}")));
    }
    let g = counts.iter().copied().fold(0, gcd).max(1);
    // Any divisor of the counts fits too (more channels, fewer QPs each): the largest within
    // NCCL's 1-128 first.
    let fits: Vec<u64> = (1..=g.min(128)).rev().filter(|d| g % d == 0).collect();
    let would = match fits.as_slice() {
        [] | [_] => "1".to_string(),
        [top, rest @ ..] => {
            format!("{top} (or {})", rest.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
        }
    };
    c.evidence = odd
        .iter()
        .take(3)
        .filter_map(|((_, a, b), (n, first))| {
            let f = w.flow(first.unwrap_or(usize::MAX))?;
            Some(f.evidence(format!("{a} → {b}: {}", plural(*n, "QP pair", "QP pairs"))))
        })
        .collect();
    let why = format!(
        "{} of {} {} a number of QP pairs that is no multiple of {q} (QPs idle through the capture are not seen)",
        odd.len(),
        plural(pairs.len() as u64, "host-pair direction", "host-pair directions"),
        if odd.len() == 1 { "has" } else { "have" }
    );
    c.mismatch(Severity::Warning, why, would)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nccl::env::parse;
    use crate::nccl::Verdict;
    use crate::report::{ConnFlows, Connection, Report, SampledReport, Word};

    fn empty() -> Report {
        crate::Analyzer::new(crate::Config::default()).report()
    }

    /// A flow carrying requests from host `s` to host `d` (10.0.0.s), on the DSCPs of `dscp`.
    fn flow(id: usize, s: u8, d: u8, dscp: &[u8]) -> FlowFacts {
        FlowFacts {
            id,
            point: 0,
            src: Some(IpAddr::from([10, 0, 0, s])),
            dst: Some(IpAddr::from([10, 0, 0, d])),
            payload_bytes: 4096,
            pure: false,
            dscp: dscp.iter().fold(0, |m, b| m | 1 << b),
            pcp: 0,
            ecn: [0, 0, 10, 0],
            priority: Some(3),
            v2: true,
            first_frame: 1 + id as u64,
            first_ns: 0,
            partner: None,
            resend_gaps: 0,
            gap_min: None,
            gap_max: None,
            gap_max_frame: None,
            retries: 0,
            retries_span: 0,
            retries_frame: None,
        }
    }

    fn wire(report: &Report, flows: Vec<FlowFacts>) -> Wire<'_> {
        let qps = flows.iter().map(|f| 0x100 + f.id as u32).collect();
        let all = flows.len() as u64;
        Wire { report, connections: &report.connections, flows, qps, all_flows: all }
    }

    fn env(text: &str) -> NcclEnv {
        parse(text).unwrap()
    }

    fn get<'a>(all: &'a [VarCheck], name: &str) -> &'a VarCheck {
        all.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("{name}: {all:#?}"))
    }

    /// (verdict, would_match, severity) of `name`.
    fn verdict(e: &str, w: &Wire<'_>, name: &str) -> (Verdict, Option<String>, Option<Severity>) {
        let checks = all(&env(e), w);
        let v = get(&checks, name);
        (v.verdict, v.would_match.clone(), v.severity)
    }

    #[test]
    fn tc_is_the_dscp_shifted_left_by_two_and_a_mismatch_names_the_value_that_fits() {
        let r = empty();
        let w = wire(&r, vec![flow(0, 1, 2, &[26]), flow(1, 2, 1, &[26]), flow(2, 2, 3, &[26])]);
        for ok in ["NCCL_IB_TC=106", "NCCL_IB_TC=104", "NCCL_IB_TC=0x68", "NCCL_IB_TC=0x16a"] {
            assert_eq!(verdict(ok, &w, "NCCL_IB_TC").0, Verdict::Match, "{ok}");
        }
        let checks = all(&env("NCCL_IB_TC=0x16a"), &w);
        assert!(get(&checks, "NCCL_IB_TC")
            .sets
            .contains("does not fit the 8-bit traffic class, whose field keeps 106"));
        assert_eq!(
            verdict("NCCL_IB_TC=96", &w, "NCCL_IB_TC"),
            (Verdict::Mismatch, Some("104".into()), Some(Severity::Warning))
        );
        // The file's low bits are kept in the value that would match when they are 10
        // (ECT(0)); 11 (CE on NICs that pass them through) and 01 are dropped.
        assert_eq!(verdict("NCCL_IB_TC=98", &w, "NCCL_IB_TC").1.as_deref(), Some("106"));
        assert_eq!(verdict("NCCL_IB_TC=99", &w, "NCCL_IB_TC").1.as_deref(), Some("104"));
        assert_eq!(verdict("NCCL_IB_TC=97", &w, "NCCL_IB_TC").1.as_deref(), Some("104"));
        // Unset: NCCL's 0, which the application or the host may override: info.
        assert_eq!(
            verdict("NCCL_DEBUG=INFO", &w, "NCCL_IB_TC"),
            (Verdict::Mismatch, Some("104".into()), Some(Severity::Info))
        );
        assert_eq!(verdict("NCCL_IB_TC=-1", &w, "NCCL_IB_TC").0, Verdict::NotChecked);
        let none = wire(&r, vec![]);
        assert_eq!(verdict("NCCL_IB_TC=106", &none, "NCCL_IB_TC").0, Verdict::NotChecked);
    }

    #[test]
    fn a_negative_tc_is_unset_only_for_minus_one_from_2_26() {
        let r = empty();
        let w63 = wire(&r, vec![flow(0, 1, 2, &[63])]);
        let w26 = wire(&r, vec![flow(0, 1, 2, &[26])]);
        // From 2.26, -1 is unset: the application's class.
        assert_eq!(verdict("# nccl 2.26\nNCCL_IB_TC=-1", &w26, "NCCL_IB_TC").0, Verdict::NotChecked);
        // Before, -1 is 255 in the uint8 field: DSCP 63.
        assert_eq!(verdict("# nccl 2.25\nNCCL_IB_TC=-1", &w63, "NCCL_IB_TC").0, Verdict::Match);
        assert_eq!(
            verdict("# nccl 2.25\nNCCL_IB_TC=-1", &w26, "NCCL_IB_TC"),
            (Verdict::Mismatch, Some("104".into()), Some(Severity::Warning))
        );
        // Unknown version: the readings differ, so not checked, naming both.
        let checks = all(&env("NCCL_IB_TC=-1"), &w63);
        let tc = get(&checks, "NCCL_IB_TC");
        assert_eq!(tc.verdict, Verdict::NotChecked);
        assert!(tc.sets.contains("from NCCL 2.26 nothing") && tc.sets.contains("DSCP 63"), "{tc:?}");
        // Other negatives wrap whatever the version: -2 is 254, DSCP 63; -104 is 152, DSCP 38.
        for e in ["NCCL_IB_TC=-2", "# nccl 2.27\nNCCL_IB_TC=-2"] {
            assert_eq!(verdict(e, &w63, "NCCL_IB_TC").0, Verdict::Match, "{e}");
        }
        let checks = all(&env("# nccl 2.27\nNCCL_IB_TC=-104"), &w26);
        let tc = get(&checks, "NCCL_IB_TC");
        assert!(tc.sets.starts_with("DSCP 38 (152 >> 2") && tc.sets.contains("-104 wraps to 152"), "{tc:?}");
        assert_eq!(tc.verdict, Verdict::Mismatch);
    }

    #[test]
    fn a_quoted_tc_in_ncclconf_is_read_as_nccl_reads_it_and_says_so() {
        let r = empty();
        let w = wire(&r, vec![flow(0, 1, 2, &[26])]);
        let e = crate::nccl::env::parse_as("NCCL_IB_TC=\"106\"\n", crate::nccl::FileKind::NcclConf).unwrap();
        let checks = all(&e, &w);
        let tc = get(&checks, "NCCL_IB_TC");
        assert_eq!(
            (tc.verdict, tc.severity, tc.would_match.as_deref()),
            (Verdict::Mismatch, Some(Severity::Warning), Some("104"))
        );
        assert!(tc.sets.starts_with("DSCP 0"), "{tc:?}");
        assert!(
            tc.reason.as_deref().is_some_and(|r| r.starts_with("line 1: NCCL's config file keeps quotes")),
            "{tc:?}"
        );
        // Unquoted, or in a shell dump: 106, a match with no such note.
        for e in [
            crate::nccl::env::parse_as("NCCL_IB_TC=106\n", crate::nccl::FileKind::NcclConf).unwrap(),
            env("NCCL_IB_TC=\"106\"\n"),
        ] {
            let checks = all(&e, &w);
            let tc = get(&checks, "NCCL_IB_TC");
            assert_eq!((tc.verdict, tc.reason.as_deref()), (Verdict::Match, None));
        }
    }

    #[test]
    fn tc_marks_other_classes_on_acks_and_cnps_are_not_judged_but_a_pure_request_flow_is() {
        let r = empty();
        // A flow with ACKs and a CNP on DSCP 48 beside its requests on 26: not judged on 48.
        let w = wire(&r, vec![flow(0, 1, 2, &[26, 48]), flow(1, 2, 1, &[26])]);
        let checks = all(&env("NCCL_IB_TC=104"), &w);
        let tc = get(&checks, "NCCL_IB_TC");
        assert_eq!(tc.verdict, Verdict::Match);
        assert!(
            tc.reason.as_deref().is_some_and(|r| r.contains("1 flow also carries other DSCPs beside 26")),
            "{tc:?}"
        );
        // Every packet a request: its other DSCP is its requests'.
        let mut pure = flow(0, 1, 2, &[26, 24]);
        pure.pure = true;
        let w = wire(&r, vec![pure, flow(1, 2, 1, &[24])]);
        assert_eq!(verdict("NCCL_IB_TC=104", &w, "NCCL_IB_TC").0, Verdict::Mismatch);
    }

    #[test]
    fn hosts_that_disagree_are_named_and_given_no_value() {
        let r = empty();
        let w = wire(&r, vec![flow(0, 1, 2, &[26]), flow(1, 2, 1, &[26]), flow(2, 9, 1, &[0])]);
        let checks = all(&env("NCCL_IB_TC=106"), &w);
        let tc = get(&checks, "NCCL_IB_TC");
        // A minority: context (info), the hosts that do not follow named, no value offered.
        assert_eq!((tc.verdict, tc.severity), (Verdict::Mismatch, Some(Severity::Info)));
        assert_eq!(tc.would_match, None);
        assert!(
            tc.reason.as_deref().is_some_and(|r| r.contains("1 of the 3 flows")
                && r.contains("10.0.0.9 does not follow NCCL_IB_TC=106")
                && r.contains("2 flows from 10.0.0.1, 10.0.0.2 fit it")),
            "{tc:?}"
        );
        assert_eq!(tc.evidence.len(), 1);
        assert_eq!(tc.evidence.first().map(|e| e.frame), Some(3));
        // A majority off the setting: still a warning, still no majority value.
        let w = wire(&r, vec![flow(0, 1, 2, &[26]), flow(1, 2, 1, &[0]), flow(2, 9, 1, &[0])]);
        let checks = all(&env("NCCL_IB_TC=106"), &w);
        let tc = get(&checks, "NCCL_IB_TC");
        assert_eq!(
            (tc.verdict, tc.severity, tc.would_match.as_deref()),
            (Verdict::Mismatch, Some(Severity::Warning), None)
        );
        assert!(
            tc.reason.as_deref().is_some_and(|r| r.contains("10.0.0.2, 10.0.0.9 do not follow")),
            "{tc:?}"
        );
        // Every host on another value: they agree, and the value that would match is given.
        let w = wire(&r, vec![flow(0, 1, 2, &[0]), flow(1, 2, 1, &[0])]);
        let checks = all(&env("NCCL_IB_TC=106"), &w);
        assert_eq!(get(&checks, "NCCL_IB_TC").would_match.as_deref(), Some("2"));
    }

    #[test]
    fn fifo_tc_is_the_lighter_directions_class_and_takes_it_from_tc() {
        let r = empty();
        let mut data = flow(0, 1, 2, &[26]);
        data.partner = Some(1);
        let mut cts = flow(1, 2, 1, &[46]);
        cts.partner = Some(0);
        cts.payload_bytes = 64;
        let w = wire(&r, vec![data, cts]);
        let e = "# nccl 2.24\nNCCL_IB_TC=106\nNCCL_IB_FIFO_TC=184\n";
        assert_eq!(verdict(e, &w, "NCCL_IB_FIFO_TC").0, Verdict::Match);
        assert_eq!(verdict(e, &w, "NCCL_IB_TC").0, Verdict::Match, "the CTS side is FIFO_TC's");
        let e = "# nccl 2.24\nNCCL_IB_TC=106\nNCCL_IB_FIFO_TC=104\n";
        assert_eq!(verdict(e, &w, "NCCL_IB_FIFO_TC").1.as_deref(), Some("184"));
        assert_eq!(
            verdict("# nccl 2.21\nNCCL_IB_FIFO_TC=184\n", &w, "NCCL_IB_FIFO_TC").0,
            Verdict::NotChecked
        );
        assert_eq!(
            verdict("# nccl 2.23\nNCCL_IB_FIFO_TC=184\n", &w, "NCCL_IB_FIFO_TC").0,
            Verdict::NotChecked
        );
        // Without FIFO_TC both directions are TC's.
        assert_eq!(verdict("NCCL_IB_TC=106\n", &w, "NCCL_IB_TC").0, Verdict::Mismatch);
    }

    #[test]
    fn sl_is_the_pcp_of_tagged_frames_only() {
        let r = empty();
        let w = wire(&r, vec![flow(0, 1, 2, &[26])]);
        let checks = all(&env("NCCL_IB_SL=3"), &w);
        let sl = get(&checks, "NCCL_IB_SL");
        assert_eq!(sl.verdict, Verdict::NotChecked);
        assert!(sl.reason.as_deref().is_some_and(|r| r.contains("no VLAN tag")));
        let mut tagged = flow(0, 1, 2, &[26]);
        tagged.pcp = 1 << 3;
        let w = wire(&r, vec![tagged]);
        assert_eq!(verdict("NCCL_IB_SL=3", &w, "NCCL_IB_SL").0, Verdict::Match);
        assert_eq!(verdict("NCCL_IB_SL=11", &w, "NCCL_IB_SL").0, Verdict::Match, "SL & 7");
        assert_eq!(verdict("NCCL_IB_SL=5", &w, "NCCL_IB_SL").1.as_deref(), Some("3"));
        // Unset SL is not listed (its default says nothing the wire can contradict).
        assert!(all(&env("NCCL_IB_TC=106"), &w).iter().all(|v| v.name != "NCCL_IB_SL"));
    }

    fn resending(gap_ms: i64, retries: u32, span_ms: i64) -> FlowFacts {
        let mut f = flow(0, 1, 2, &[26]);
        f.resend_gaps = u64::from(retries);
        f.gap_min = Some(gap_ms * 1_000_000);
        f.gap_max = Some(gap_ms * 1_000_000);
        f.gap_max_frame = Some(40);
        f.retries = retries;
        f.retries_span = span_ms * 1_000_000;
        f.retries_frame = Some(50);
        f
    }

    #[test]
    fn timeout_is_contradicted_only_by_a_gap_beyond_four_timeouts() {
        let r = empty();
        let none = wire(&r, vec![flow(0, 1, 2, &[26])]);
        assert_eq!(verdict("NCCL_IB_TIMEOUT=14", &none, "NCCL_IB_TIMEOUT").0, Verdict::NotChecked);
        let w = wire(&r, vec![resending(75, 3, 225)]);
        assert_eq!(verdict("NCCL_IB_TIMEOUT=14", &w, "NCCL_IB_TIMEOUT").0, Verdict::Match);
        // 16.8 ms × 4 = 67.1 ms < 75 ms: the timeout that fits is 14 (67.1 ms ≤ 75 ms).
        let (v, would, sev) = verdict("NCCL_IB_TIMEOUT=12", &w, "NCCL_IB_TIMEOUT");
        assert_eq!((v, would.as_deref(), sev), (Verdict::Mismatch, Some("14"), Some(Severity::Warning)));
        let checks = all(&env("NCCL_IB_TIMEOUT=12"), &w);
        assert_eq!(get(&checks, "NCCL_IB_TIMEOUT").evidence.first().map(|e| e.frame), Some(40));
        // 13 is 33.6 ms: 75 ms is within 4 of them.
        assert_eq!(verdict("NCCL_IB_TIMEOUT=13", &w, "NCCL_IB_TIMEOUT").0, Verdict::Match);
        // Early resends (adaptive retransmission) are normal.
        let early = wire(&r, vec![resending(2, 1, 2)]);
        let checks = all(&env("NCCL_IB_TIMEOUT=20"), &early);
        let t = get(&checks, "NCCL_IB_TIMEOUT");
        assert_eq!(t.verdict, Verdict::Match);
        assert!(t.reason.as_deref().is_some_and(|r| r.contains("adaptive retransmission")), "{t:?}");
        // Infinite: the capture cannot tell.
        for inf in ["NCCL_IB_TIMEOUT=0", "NCCL_IB_TIMEOUT=32"] {
            let checks = all(&env(inf), &w);
            let t = get(&checks, "NCCL_IB_TIMEOUT");
            assert_eq!(t.verdict, Verdict::NotChecked, "{inf}");
            assert!(t.sets.starts_with("an infinite ACK timeout"), "{t:?}");
        }
        // Unset: the version's default; unknown, the longest (20: 4.29 s).
        assert_eq!(verdict("# nccl 2.12\nNCCL_DEBUG=1\n", &w, "NCCL_IB_TIMEOUT").0, Verdict::Match);
        let slow = wire(&r, vec![resending(300, 1, 300)]);
        assert_eq!(verdict("# nccl 2.12\nNCCL_DEBUG=1\n", &slow, "NCCL_IB_TIMEOUT").1.as_deref(), Some("16"));
        assert_eq!(verdict("# nccl 2.14\nNCCL_DEBUG=1\n", &slow, "NCCL_IB_TIMEOUT").0, Verdict::Match);
        assert_eq!(verdict("NCCL_DEBUG=1\n", &slow, "NCCL_IB_TIMEOUT").0, Verdict::Match);
        // A sampled capture: not checked.
        let mut sampled = empty();
        sampled.sampled = Some(SampledReport {
            source: crate::SamplingSource::Flag,
            rate: Some(100),
            rate_min: 100,
            rate_max: 100,
            samples: 0,
            loss_verdicts: false,
            suppressed_findings: 0,
            latency_upper_bound: true,
        });
        let ws = wire(&sampled, vec![resending(75, 3, 225)]);
        assert_eq!(verdict("NCCL_IB_TIMEOUT=12", &ws, "NCCL_IB_TIMEOUT").0, Verdict::NotChecked);
        assert_eq!(verdict("NCCL_IB_RETRY_CNT=2", &ws, "NCCL_IB_RETRY_CNT").0, Verdict::NotChecked);
    }

    #[test]
    fn retries_beyond_the_count_contradict_it_only_past_the_whole_budget() {
        let r = empty();
        let w = wire(&r, vec![resending(75, 3, 225)]);
        assert_eq!(verdict("NCCL_IB_RETRY_CNT=7", &w, "NCCL_IB_RETRY_CNT").0, Verdict::Match);
        assert_eq!(verdict("NCCL_IB_RETRY_CNT=3", &w, "NCCL_IB_RETRY_CNT").0, Verdict::Match);
        // 2 × 16.8 ms < 225 ms.
        let (v, would, _) = verdict("NCCL_IB_TIMEOUT=12\nNCCL_IB_RETRY_CNT=2\n", &w, "NCCL_IB_RETRY_CNT");
        assert_eq!(
            (v, would.as_deref()),
            (Verdict::Mismatch, Some("3 or more (at least 3 retries seen; NCCL's default is 7)"))
        );
        // 2 × 4.29 s > 225 ms: adaptive retransmission within the budget.
        let checks = all(&env("NCCL_IB_TIMEOUT=20\nNCCL_IB_RETRY_CNT=2\n"), &w);
        let rc = get(&checks, "NCCL_IB_RETRY_CNT");
        assert_eq!(rc.verdict, Verdict::Match);
        assert!(rc.reason.as_deref().is_some_and(|r| r.contains("adaptive retransmission")));
        let many = wire(&r, vec![resending(75, 9, 675)]);
        let would = verdict("NCCL_IB_TIMEOUT=12\nNCCL_IB_RETRY_CNT=2\n", &many, "NCCL_IB_RETRY_CNT").1;
        assert!(would.is_some_and(|w| w.starts_with("7 (the most there is")));
        assert_eq!(verdict("NCCL_IB_RETRY_CNT=9", &w, "NCCL_IB_RETRY_CNT").0, Verdict::NotChecked);
        let quiet = wire(&r, vec![flow(0, 1, 2, &[26])]);
        assert_eq!(verdict("NCCL_IB_RETRY_CNT=2", &quiet, "NCCL_IB_RETRY_CNT").0, Verdict::NotChecked);
    }

    #[test]
    fn the_gid_index_is_read_on_a_typical_table_and_auto_selection_on_its_preferences() {
        let r = empty();
        let w = wire(&r, vec![flow(0, 1, 2, &[26]), flow(1, 2, 1, &[26])]);
        assert_eq!(verdict("NCCL_IB_GID_INDEX=3", &w, "NCCL_IB_GID_INDEX").0, Verdict::Match);
        let (v, would, sev) = verdict("NCCL_IB_GID_INDEX=0", &w, "NCCL_IB_GID_INDEX");
        assert_eq!((v, sev), (Verdict::Mismatch, Some(Severity::Info)));
        assert!(would.is_some_and(|x| x.starts_with("3 (on a typical table")));
        assert_eq!(verdict("NCCL_IB_GID_INDEX=5", &w, "NCCL_IB_GID_INDEX").0, Verdict::NotChecked);
        // Unset: index 0 before 2.21, auto-selection after; unknown: either fits.
        assert_eq!(verdict("# nccl 2.20\nNCCL_DEBUG=1\n", &w, "NCCL_IB_GID_INDEX").0, Verdict::Mismatch);
        assert_eq!(verdict("# nccl 2.21\nNCCL_DEBUG=1\n", &w, "NCCL_IB_GID_INDEX").0, Verdict::Match);
        assert_eq!(verdict("NCCL_DEBUG=1\n", &w, "NCCL_IB_GID_INDEX").0, Verdict::Match);
        let mut v1 = flow(0, 1, 2, &[26]);
        v1.v2 = false;
        v1.src = "fe80::1".parse().ok();
        let old = wire(&r, vec![v1]);
        assert_eq!(
            verdict("NCCL_DEBUG=1\n", &old, "NCCL_IB_GID_INDEX").0,
            Verdict::Match,
            "index 0 before 2.21"
        );
        assert_eq!(verdict("# nccl 2.22\nNCCL_DEBUG=1\n", &old, "NCCL_IB_GID_INDEX").0, Verdict::Mismatch);
        // The auto-selection's parts a variable sets are that variable's.
        let e = "# nccl 2.22\nNCCL_IB_ROCE_VERSION_NUM=1\n";
        assert_eq!(verdict(e, &w, "NCCL_IB_ROCE_VERSION_NUM").1.as_deref(), Some("2"));
        assert_eq!(verdict(e, &w, "NCCL_IB_GID_INDEX").0, Verdict::Match, "the family is AF_INET");
        let e = "# nccl 2.22\nNCCL_IB_ADDR_FAMILY=AF_INET6\n";
        assert_eq!(verdict(e, &w, "NCCL_IB_ADDR_FAMILY").1.as_deref(), Some("AF_INET"));
        let e = "NCCL_IB_ROCE_VERSION_NUM=2\nNCCL_IB_ADDR_FAMILY=AF_INET\n";
        assert_eq!(verdict(e, &w, "NCCL_IB_GID_INDEX").0, Verdict::NotChecked);
        assert_eq!(verdict(e, &w, "NCCL_IB_ROCE_VERSION_NUM").0, Verdict::Match);
        let e = "NCCL_IB_GID_INDEX=3\nNCCL_IB_ROCE_VERSION_NUM=1\n";
        assert_eq!(verdict(e, &w, "NCCL_IB_ROCE_VERSION_NUM").0, Verdict::NotChecked, "no auto-selection");
    }

    fn connect(r: &mut Report, a: u8, b: u8, ids: (usize, usize)) {
        r.connections.push(Connection {
            point: 0,
            a: IpAddr::from([10, 0, 0, a]),
            b: IpAddr::from([10, 0, 0, b]),
            a_qpn: Some(1),
            b_qpn: 2,
            flows: ConnFlows::two(ids.0, ids.1),
            pairing: Word::new("psn"),
            packets: 10,
            bytes: 1000,
            health: Word::new("ok"),
        });
    }

    /// `n` QP pairs whose data goes from `s` to `d` (the heavier flow), each with a lighter
    /// CTS flow back; the connection listed `d` first when `flip` (the report's `a` is
    /// whichever end it saw first).
    fn qp_pairs(r: &mut Report, flows: &mut Vec<FlowFacts>, s: u8, d: u8, n: usize, flip: bool) {
        for _ in 0..n {
            let id = flows.len();
            flows.push(flow(id, s, d, &[26]));
            let mut cts = flow(id + 1, d, s, &[26]);
            cts.payload_bytes = 64;
            flows.push(cts);
            if flip {
                connect(r, d, s, (id + 1, id));
            } else {
                connect(r, s, d, (id, id + 1));
            }
        }
    }

    #[test]
    fn qp_pairs_per_host_pair_are_a_multiple_of_qps_per_connection() {
        let mut r = empty();
        let mut flows = Vec::new();
        // Two QP pairs sending from .1 to .2, four from .3 to .2 (listed either way round).
        qp_pairs(&mut r, &mut flows, 1, 2, 1, false);
        qp_pairs(&mut r, &mut flows, 1, 2, 1, true);
        qp_pairs(&mut r, &mut flows, 3, 2, 2, false);
        qp_pairs(&mut r, &mut flows, 3, 2, 2, true);
        // A connection whose flows carry no requests is not counted.
        connect(&mut r, 1, 2, (900, 901));
        let w = wire(&r, flows);
        assert_eq!(
            verdict("NCCL_IB_QPS_PER_CONNECTION=2", &w, "NCCL_IB_QPS_PER_CONNECTION").0,
            Verdict::Match
        );
        assert_eq!(verdict("NCCL_DEBUG=1", &w, "NCCL_IB_QPS_PER_CONNECTION").0, Verdict::Match);
        let checks = all(&env("NCCL_IB_QPS_PER_CONNECTION=4"), &w);
        let q = get(&checks, "NCCL_IB_QPS_PER_CONNECTION");
        assert_eq!((q.verdict, q.would_match.as_deref()), (Verdict::Mismatch, Some("2 (or 1)")));
        assert_eq!(
            q.wire,
            "QP pairs carrying requests per direction (sender → receiver): 2 on 1 pair, 4 on 1 pair"
        );
        assert!(
            q.reason.as_deref().is_some_and(|r| r.starts_with("1 of 2 host-pair directions has a number")),
            "{q:?}"
        );
        assert_eq!(q.evidence.first().map(|e| e.what.as_str()), Some("10.0.0.1 → 10.0.0.2: 2 QP pairs"));
        // A prime count: only itself and 1 divide it.
        let mut r23 = empty();
        let mut f23 = Vec::new();
        for k in 0..23 {
            f23.push(flow(2 * k, 1, 2, &[26]));
            f23.push(flow(2 * k + 1, 2, 1, &[26]));
            connect(&mut r23, 1, 2, (2 * k, 2 * k + 1));
        }
        let w23 = wire(&r23, f23);
        let would = verdict("NCCL_IB_QPS_PER_CONNECTION=2", &w23, "NCCL_IB_QPS_PER_CONNECTION").1;
        assert_eq!(would.as_deref(), Some("23 (or 1)"));
        // A count above 128: its largest divisor within 1-128 first.
        let mut r = empty();
        let mut f = Vec::new();
        for k in 0..256 {
            f.push(flow(2 * k, 1, 2, &[26]));
            f.push(flow(2 * k + 1, 2, 1, &[26]));
            connect(&mut r, 1, 2, (2 * k, 2 * k + 1));
        }
        let w = wire(&r, f);
        let would = verdict("NCCL_IB_QPS_PER_CONNECTION=3", &w, "NCCL_IB_QPS_PER_CONNECTION").1;
        assert_eq!(would.as_deref(), Some("128 (or 64, 32, 16, 8, 4, 2, 1)"));
        assert_eq!(
            verdict("NCCL_IB_QPS_PER_CONNECTION=200", &w, "NCCL_IB_QPS_PER_CONNECTION").0,
            Verdict::NotChecked
        );
    }

    #[test]
    fn qps_per_connection_counts_each_direction_apart() {
        // Two hosts, one channel each way, 2 QPs per connection: 2 QP pairs sending from .1,
        // 2 from .2. Per unordered pair that was 4, which "matched" 4.
        let mut r = empty();
        let mut flows = Vec::new();
        qp_pairs(&mut r, &mut flows, 1, 2, 2, false);
        qp_pairs(&mut r, &mut flows, 2, 1, 2, false);
        let w = wire(&r, flows);
        let q2 = "NCCL_IB_QPS_PER_CONNECTION=2";
        assert_eq!(verdict(q2, &w, "NCCL_IB_QPS_PER_CONNECTION").0, Verdict::Match);
        let (v, would, _) = verdict("NCCL_IB_QPS_PER_CONNECTION=4", &w, "NCCL_IB_QPS_PER_CONNECTION");
        assert_eq!((v, would.as_deref()), (Verdict::Mismatch, Some("2 (or 1)")));
        let checks = all(&env("NCCL_IB_QPS_PER_CONNECTION=4"), &w);
        let q = get(&checks, "NCCL_IB_QPS_PER_CONNECTION");
        assert_eq!(q.checked, 2, "{q:?}");
        // One QP each way: 1 per direction, so 1 is what fits, not 2.
        let mut r = empty();
        let mut flows = Vec::new();
        qp_pairs(&mut r, &mut flows, 1, 2, 1, false);
        qp_pairs(&mut r, &mut flows, 2, 1, 1, true);
        let w = wire(&r, flows);
        let (v, would, _) = verdict("NCCL_IB_QPS_PER_CONNECTION=3", &w, "NCCL_IB_QPS_PER_CONNECTION");
        assert_eq!((v, would.as_deref()), (Verdict::Mismatch, Some("1")));
        // Equal bytes both ways: the direction the report lists first.
        let mut r = empty();
        let f = vec![flow(0, 1, 2, &[26]), flow(1, 2, 1, &[26])];
        connect(&mut r, 2, 1, (1, 0));
        let w = wire(&r, f);
        let checks = all(&env("NCCL_IB_QPS_PER_CONNECTION=2"), &w);
        let q = get(&checks, "NCCL_IB_QPS_PER_CONNECTION");
        assert_eq!(q.evidence.first().map(|e| e.what.as_str()), Some("10.0.0.2 → 10.0.0.1: 1 QP pair"));
    }

    #[test]
    fn other_variables_are_listed_not_checked_with_what_they_set() {
        let r = empty();
        let w = wire(&r, vec![flow(0, 1, 2, &[26])]);
        let checks = all(&env("NCCL_IB_HCA=mlx5_0\nNCCL_IB_FANCY=1\n"), &w);
        let names: Vec<&str> = checks.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "NCCL_IB_TC",
                "NCCL_IB_TIMEOUT",
                "NCCL_IB_RETRY_CNT",
                "NCCL_IB_GID_INDEX",
                "NCCL_IB_QPS_PER_CONNECTION",
                "NCCL_IB_HCA",
                "NCCL_IB_FANCY"
            ]
        );
        for v in checks.iter().skip(5) {
            assert_eq!(v.verdict, Verdict::NotChecked);
            assert!(!v.sets.is_empty() && v.reason.is_some(), "{v:?}");
        }
    }
}
