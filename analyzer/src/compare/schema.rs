//! A report document's values checked against the ranges and words of its JSON schema
//! (docs/report.schema.json), for every field a comparison reads: a document with a
//! priority of 255 (the schema's maximum is 7) must not be compared, or its traffic lands on
//! no priority and a verdict vanishes while the gate passes (issue 40).
//!
//! Why not the schema itself at run time: a report of 100,000 QPs is 356 MB of JSON, which a
//! validator needs whole as a `serde_json::Value` (several GB), where the facts are read as
//! the document streams by. So the types of [`ReportFacts`] hold what the schema's types say
//! (an integer where it wants one, `u8` where 255 is the most), and this module what types
//! cannot: ranges, the enumerated words, list lengths, and that the indexes a document
//! holds (a flow's point and partner, a series' point) name things it has. Fields a
//! comparison does not read are skipped as they stream by and not checked. Missing fields
//! that older reports lack stay accepted, as before.

use super::facts::{ClassMarksFacts, FlowFacts, ReportFacts};
use crate::report::FindingKind;
use std::fmt;

/// A value out of the schema: where it is (a JSON path, `flows[3].priority`) and what is
/// wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutOfSchema {
    /// The JSON path of the value (`timeline.points[0].priorities[2].priority`).
    pub path: String,
    /// What is wrong (`is 255; the schema allows 0 to 7`).
    pub problem: String,
}

impl fmt::Display for OutOfSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path, self.problem)
    }
}

/// The NIC counter figures the schema names (`counters.figures[].figure`).
pub const COUNTER_FIGURES: &[&str] = &[
    "cnp_sent",
    "cnp_handled",
    "cnp_ignored",
    "ecn_marked_received",
    "seq_err_nak_received",
    "out_of_sequence",
    "implied_nak",
    "local_ack_timeout",
    "duplicate_request",
    "rnr_nak_received",
    "pause_rx",
    "pause_tx",
    "pfc_frames_rx",
    "pfc_frames_tx",
    "pause_rx_duration_us",
    "pause_tx_duration_us",
    "link_pause_rx",
    "link_pause_tx",
    "rx_discards",
    "rx_prio_discards",
    "out_of_buffer",
    "rx_out_of_buffer",
    "roce_rx_discards",
];

/// The path MTUs a flow may have (`flows[].pmtu`; 0 unknown).
const PMTUS: [u32; 6] = [0, 256, 512, 1024, 2048, 4096];

/// The out-of-schema error at `path` (built only when a value fails).
fn bad(path: impl FnOnce() -> String, problem: String) -> Result<(), OutOfSchema> {
    Err(OutOfSchema { path: path(), problem })
}

/// `v` within `lo..=hi`.
fn range(v: u64, lo: u64, hi: u64, path: impl FnOnce() -> String) -> Result<(), OutOfSchema> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else if hi == u64::MAX {
        bad(path, format!("is {v}; the schema allows {lo} or more"))
    } else {
        bad(path, format!("is {v}; the schema allows {lo} to {hi}"))
    }
}

/// `v` one of `words`.
fn word(v: &str, words: &[&str], path: impl FnOnce() -> String) -> Result<(), OutOfSchema> {
    if words.contains(&v) {
        return Ok(());
    }
    let shown: Vec<&str> = words.iter().take(8).copied().collect();
    let more = if words.len() > 8 { format!(" and {} more", words.len() - 8) } else { String::new() };
    let v: String = v.chars().take(64).collect();
    bad(path, format!("is {v:?}; the schema allows {}{more}", shown.join(", ")))
}

/// A list of at most `max` items.
fn most(len: usize, max: usize, path: impl FnOnce() -> String) -> Result<(), OutOfSchema> {
    if len <= max {
        Ok(())
    } else {
        bad(path, format!("has {len} items; the schema allows at most {max}"))
    }
}

/// Check `r` (module docs): the first value out of the schema, in document order.
pub fn check(r: &ReportFacts) -> Result<(), OutOfSchema> {
    let points = r.points.len();
    if let Some(q) = &r.summary.capture_quality {
        if !(0.0..=1.0).contains(&q.share) {
            return bad(
                || "summary.capture_quality.share".into(),
                format!("is {}; the schema allows 0 to 1", q.share),
            );
        }
    }
    for (i, p) in r.points.iter().enumerate() {
        if let Some(m) = &p.marks {
            for (class, c) in [("data", &m.data), ("ack", &m.ack), ("cnp", &m.cnp)] {
                class_marks(c, || format!("points[{i}].marks.{class}"))?;
            }
        }
    }
    let kinds: Vec<&str> = FindingKind::ALL.iter().map(|k| k.as_str()).collect();
    for (i, f) in r.findings.iter().enumerate() {
        word(&f.severity, &["critical", "warning", "info"], || format!("findings[{i}].severity"))?;
        word(&f.kind, &kinds, || format!("findings[{i}].kind"))?;
    }
    for (i, f) in r.flows.iter().enumerate() {
        flow(f, i, points, r.flows.len())?;
    }
    for (i, c) in r.connections.iter().enumerate() {
        index(usize::from(c.point), points, "points", || format!("connections[{i}].point"))?;
    }
    timeline(r, points)?;
    if let Some(n) = &r.nccl {
        for (i, v) in n.variables.iter().enumerate() {
            word(&v.verdict, &["match", "mismatch", "not_checked"], || {
                format!("nccl.variables[{i}].verdict")
            })?;
        }
    }
    if let Some(c) = &r.counters {
        word(&c.mode, &["delta", "absolute"], || "counters.mode".into())?;
        for (i, f) in c.figures.iter().enumerate() {
            word(&f.figure, COUNTER_FIGURES, || format!("counters.figures[{i}].figure"))?;
            if let Some(p) = f.priority {
                range(u64::from(p), 0, 7, || format!("counters.figures[{i}].priority"))?;
            }
        }
    }
    for (i, s) in r.latency_samples.iter().flatten().enumerate() {
        index(usize::from(s.point), points, "points", || format!("latency_samples[{i}].point"))?;
        range(u64::from(s.priority), 0, 7, || format!("latency_samples[{i}].priority"))?;
        if let Some(e) = &s.exact {
            most(e.len(), crate::latency_samples::EXACT_CAP, || format!("latency_samples[{i}].exact"))?;
        }
        if let Some(b) = &s.blocks {
            range(b.width_ns, 1000, u64::MAX, || format!("latency_samples[{i}].blocks.width_ns"))?;
            range(u64::from(b.sub_bits), 5, 5, || format!("latency_samples[{i}].blocks.sub_bits"))?;
            for (j, &(block, bucket, n)) in b.counts.iter().enumerate() {
                let at = |k: usize| move || format!("latency_samples[{i}].blocks.counts[{j}][{k}]");
                range(u64::from(block), 0, 31, at(0))?;
                range(u64::from(bucket), 0, 1023, at(1))?;
                range(n, 1, u64::MAX, at(2))?;
            }
        }
    }
    options(r)
}

/// `points[].marks.CLASS`: DSCP values 0 to 63, PCP values 0 to 7.
fn class_marks(c: &ClassMarksFacts, at: impl Fn() -> String) -> Result<(), OutOfSchema> {
    for (j, v) in c.dscp.iter().enumerate() {
        if let Some(x) = v.value {
            range(u64::from(x), 0, 63, || format!("{}.dscp[{j}].value", at()))?;
        }
    }
    for (j, v) in c.pcp.iter().enumerate() {
        if let Some(x) = v.value {
            range(u64::from(x), 0, 7, || format!("{}.pcp[{j}].value", at()))?;
        }
    }
    Ok(())
}

/// An index into a list of `len` things the document holds (`what`).
fn index(i: usize, len: usize, what: &str, path: impl FnOnce() -> String) -> Result<(), OutOfSchema> {
    if i < len {
        Ok(())
    } else {
        bad(path, format!("is {i}, but the document's {what} has {len} entries"))
    }
}

/// `flows[i]`.
fn flow(f: &FlowFacts, i: usize, points: usize, flows: usize) -> Result<(), OutOfSchema> {
    index(usize::from(f.point), points, "points", || format!("flows[{i}].point"))?;
    range(u64::from(f.dest_qp), 0, 0xff_ffff, || format!("flows[{i}].dest_qp"))?;
    if let Some(p) = f.priority {
        range(u64::from(p), 0, 7, || format!("flows[{i}].priority"))?;
    }
    for (j, d) in f.dscp.iter().enumerate() {
        range(u64::from(*d), 0, 63, || format!("flows[{i}].dscp[{j}]"))?;
    }
    for (j, p) in f.pcp.iter().enumerate() {
        range(u64::from(*p), 0, 7, || format!("flows[{i}].pcp[{j}]"))?;
    }
    if let Some(p) = f.partner {
        index(p, flows, "flows", || format!("flows[{i}].partner"))?;
    }
    if !PMTUS.contains(&f.pmtu) {
        return bad(
            || format!("flows[{i}].pmtu"),
            format!("is {}; the schema allows 0, 256, 512, 1024, 2048 or 4096", f.pmtu),
        );
    }
    Ok(())
}

/// `timeline`: its bin widths, at most 8 priorities a point, each 0 to 7, at most 256 bins.
fn timeline(r: &ReportFacts, points: usize) -> Result<(), OutOfSchema> {
    let t = &r.timeline;
    // 0: absent (a report made before the field).
    if t.base_ns != 0 {
        range(t.base_ns, 1000, 1_000_000_000, || "timeline.base_ns".into())?;
    }
    for (i, p) in t.points.iter().enumerate() {
        index(usize::from(p.point), points, "points", || format!("timeline.points[{i}].point"))?;
        range(p.bin_ns, 1000, u64::MAX, || format!("timeline.points[{i}].bin_ns"))?;
        most(p.priorities.len(), 8, || format!("timeline.points[{i}].priorities"))?;
        for (j, s) in p.priorities.iter().enumerate() {
            let at = || format!("timeline.points[{i}].priorities[{j}]");
            range(u64::from(s.priority), 0, 7, || format!("{}.priority", at()))?;
            for (name, v) in [
                ("bytes", &s.bytes),
                ("packets", &s.packets),
                ("ce", &s.ce),
                ("cnps", &s.cnps),
                ("pause_ns", &s.pause_ns),
            ] {
                most(v.len(), 256, || format!("{}.{name}", at()))?;
            }
            for (name, v) in [("data_packets", &s.data_packets), ("data_ce", &s.data_ce)] {
                most(v.as_ref().map_or(0, Vec::len), 256, || format!("{}.{name}", at()))?;
            }
        }
    }
    Ok(())
}

/// `config` and `audit.expected`: the values the schema gives ranges or words (the keys a
/// comparison sets side by side, `options_differ`).
fn options(r: &ReportFacts) -> Result<(), OutOfSchema> {
    use serde_json::Value;
    let int = |v: &Value, lo: u64, hi: u64, path: &dyn Fn() -> String| match v.as_u64() {
        Some(x) => range(x, lo, hi, path),
        None => bad(path, format!("is {v}; the schema wants an integer from {lo} to {hi}")),
    };
    if let Some(c) = &r.config {
        for (key, lo) in
            [("link_speed_bps", 1), ("storm_window_ns", 1), ("deadlock_ns", 0), ("pause_allowance_ns", 0)]
        {
            if let Some(v) = c.get(key).filter(|v| !v.is_null()) {
                int(v, lo, u64::MAX, &|| format!("config.{key}"))?;
            }
        }
        if let Some(v) = c.get("storm_threshold").filter(|v| !v.is_null()) {
            if !v.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)) {
                return bad(|| "config.storm_threshold".into(), format!("is {v}; the schema allows 0 to 1"));
            }
        }
    }
    let Some(e) = r.audit.as_ref().and_then(|a| a.expected.as_ref()) else { return Ok(()) };
    for (key, hi) in [("roce_dscp", 63), ("cnp_dscp", 63), ("roce_pcp", 7)] {
        if let Some(v) = e.get(key).filter(|v| !v.is_null()) {
            int(v, 0, hi, &|| format!("audit.expected.{key}"))?;
        }
    }
    for (key, words) in [("trust", &["pcp", "dscp"][..]), ("pcp_tag", &["outer", "inner"][..])] {
        if let Some(v) = e.get(key).filter(|v| !v.is_null()) {
            match v.as_str() {
                Some(s) => word(s, words, || format!("audit.expected.{key}"))?,
                None => {
                    return bad(
                        || format!("audit.expected.{key}"),
                        format!("is {v}; the schema wants a word"),
                    )
                }
            }
        }
    }
    for key in ["roce_dscps", "ack_dscps", "cnp_dscps", "outer_dscps"] {
        if let Some(Value::Array(l)) = e.get(key) {
            if l.is_empty() {
                return bad(
                    || format!("audit.expected.{key}"),
                    "is empty; the schema wants at least one DSCP, or null".into(),
                );
            }
            for (j, v) in l.iter().enumerate() {
                int(v, 0, 63, &|| format!("audit.expected.{key}[{j}]"))?;
            }
        }
    }
    if let Some(Value::Array(l)) = e.get("lossless_priorities") {
        for (j, v) in l.iter().enumerate() {
            int(v, 0, 7, &|| format!("audit.expected.lossless_priorities[{j}]"))?;
        }
    }
    if let Some(Value::Array(m)) = e.get("dscp_map") {
        if m.len() != 64 {
            return bad(
                || "audit.expected.dscp_map".into(),
                format!("has {} items; the schema wants 64", m.len()),
            );
        }
        for (j, v) in m.iter().enumerate() {
            int(v, 0, 7, &|| format!("audit.expected.dscp_map[{j}]"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words checked here are the schema's own.
    #[test]
    fn the_words_are_the_schemas() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/report.schema.json");
        let text = std::fs::read_to_string(path).expect("docs/report.schema.json");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema parses");
        let words = |pointer: &str| -> Vec<String> {
            schema
                .pointer(pointer)
                .and_then(serde_json::Value::as_array)
                .unwrap_or_else(|| panic!("{pointer}"))
                .iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        };
        let figures = words("/properties/counters/properties/figures/items/properties/figure/enum");
        assert_eq!(figures, COUNTER_FIGURES);
        let kinds = words("/properties/findings/items/properties/kind/enum");
        assert_eq!(kinds, FindingKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>());
        let severities = words("/properties/findings/items/properties/severity/enum");
        assert_eq!(severities, ["critical", "warning", "info"]);
        let verdicts = words("/properties/nccl/properties/variables/items/properties/verdict/enum");
        assert_eq!(verdicts, ["match", "mismatch", "not_checked"]);
    }
}
