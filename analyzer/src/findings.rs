//! Findings kept within bounds: a capture of a million QPs, each with one bad ICRC, makes a
//! million findings of one kind, and a report that lists them all (231 MB of text, 4.6 GB
//! of memory) is not read by anyone. Each kind keeps its [`Config::findings_per_kind`]
//! most important findings one by one; the rest fold into one summary finding of that kind
//! that says how many it stands for, of which severities, and shows the heaviest of them.
//! Nothing is lost from the figures: every flow keeps its counters, the severity counts
//! count every finding, and each flow's health is its worst finding, folded or not.
//!
//! Memory is bounded while the findings are made (not only once they are all made): a
//! finding beyond the bound is folded as soon as it arrives.
//!
//! [`Config::findings_per_kind`]: crate::Config::findings_per_kind

use rocescope_model::findings::{EvidenceRef, Finding, FindingKind, Severity, SeverityCounts};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// How many folded findings a summary shows as examples.
const EXAMPLES: usize = 3;

/// Most important first: worse severity, then heavier, then by title (a stable order).
fn rank(x: &Finding, y: &Finding) -> Ordering {
    x.severity.cmp(&y.severity).then(y.weight.cmp(&x.weight)).then_with(|| x.title.cmp(&y.title))
}

/// The `limit` most important findings, and the one it would drop next.
#[derive(Debug, Default)]
struct Top {
    kept: Vec<Finding>,
}

impl Top {
    /// Keep `f` if it is among the `limit` most important; return what falls out (`f`, or
    /// the least important kept one).
    fn offer(&mut self, f: Finding, limit: usize) -> Option<Finding> {
        if self.kept.len() < limit {
            self.kept.push(f);
            return None;
        }
        // The least important kept finding (a linear scan: `limit` is small).
        let Some((i, least)) = self.kept.iter().enumerate().max_by(|a, b| rank(a.1, b.1)) else {
            return Some(f);
        };
        if rank(&f, least) == Ordering::Less {
            Some(std::mem::replace(&mut self.kept[i], f))
        } else {
            Some(f)
        }
    }
}

/// What the folded findings of one kind add up to.
#[derive(Debug, Default)]
struct Folded {
    counts: SeverityCounts,
    weight: u64,
    flows: u64,
    /// The heaviest folded findings, shown as examples.
    examples: Top,
}

impl Folded {
    fn add(&mut self, f: Finding) {
        match f.severity {
            Severity::Critical => self.counts.critical += 1,
            Severity::Warning => self.counts.warning += 1,
            Severity::Info => self.counts.info += 1,
        }
        self.weight = self.weight.saturating_add(f.weight);
        self.flows += u64::from(f.flow.is_some());
        let _ = self.examples.offer(f, EXAMPLES);
    }

    fn total(&self) -> u64 {
        self.counts.critical + self.counts.warning + self.counts.info
    }
}

/// Where the report's findings are collected: bounded per kind, with every flow's worst
/// severity and the severity counts of all findings, folded or not.
#[derive(Debug)]
pub(crate) struct FindingSink {
    limit: usize,
    kinds: BTreeMap<FindingKind, (Top, Folded)>,
    counts: SeverityCounts,
    flow_worst: Vec<Option<Severity>>,
    /// A sampled capture: findings that need every packet are not made.
    sampled: bool,
    /// Those not made.
    suppressed: u64,
    /// A kind one capture-wide finding stands for (crate::report::quality): its per-flow
    /// findings are not made.
    absorbed: Option<FindingKind>,
}

impl FindingSink {
    /// A sink for a report over `flows` flows keeping `limit` findings of each kind one by
    /// one (0: no limit).
    pub(crate) fn new(flows: usize, limit: usize) -> Self {
        FindingSink {
            limit: if limit == 0 { usize::MAX } else { limit },
            kinds: BTreeMap::new(),
            counts: SeverityCounts::default(),
            flow_worst: vec![None; flows],
            sampled: false,
            suppressed: 0,
            absorbed: None,
        }
    }

    /// The capture is sampled: drop findings whose verdict needs every packet
    /// ([`FindingKind::needs_every_packet`]), counting them.
    pub(crate) fn set_sampled(&mut self, sampled: bool) {
        self.sampled = sampled;
    }

    /// Findings not made because the capture is sampled.
    pub(crate) fn suppressed(&self) -> u64 {
        self.suppressed
    }

    /// Findings of `kind` about one flow are not made from now on: one capture-wide
    /// finding says what they would (the capture-quality headline, which replaces a
    /// `capture_loss` line per QP).
    pub(crate) fn absorb(&mut self, kind: FindingKind) {
        self.absorbed = Some(kind);
    }

    /// Add a finding.
    pub(crate) fn push(&mut self, f: Finding) {
        if self.sampled && f.kind.needs_every_packet() {
            self.suppressed += 1;
            return;
        }
        if self.absorbed == Some(f.kind) && f.flow.is_some() {
            return;
        }
        match f.severity {
            Severity::Critical => self.counts.critical += 1,
            Severity::Warning => self.counts.warning += 1,
            Severity::Info => self.counts.info += 1,
        }
        if let Some(w) = f.flow.and_then(|i| self.flow_worst.get_mut(i)) {
            *w = Some(w.map_or(f.severity, |x| x.min(f.severity)));
        }
        let (top, folded) = self.kinds.entry(f.kind).or_default();
        if let Some(out) = top.offer(f, self.limit) {
            folded.add(out);
        }
    }

    /// The worst severity of each flow's findings (folded ones included).
    pub(crate) fn flow_worst(&self) -> &[Option<Severity>] {
        &self.flow_worst
    }

    /// Every finding counted by severity (a folded summary counts the findings it holds).
    pub(crate) fn counts(&self) -> SeverityCounts {
        self.counts
    }

    /// The findings to list, most important first: the kept ones and one summary per kind
    /// that folded any. `flow_name` names a flow in a summary's evidence.
    pub(crate) fn finish(self, flow_name: impl Fn(usize) -> String) -> Vec<Finding> {
        let mut out = Vec::new();
        let mut summaries = Vec::new();
        for (kind, (top, folded)) in self.kinds {
            let kept = top.kept.len();
            out.extend(top.kept);
            if folded.total() > 0 {
                summaries.push(summary(kind, kept, folded, &flow_name));
            }
        }
        out.sort_by(rank);
        // Each summary right after the last finding of its kind listed, so it reads as "and
        // this many more like these".
        for s in summaries {
            let at = out.iter().rposition(|f| f.kind == s.kind).map_or(out.len(), |i| i + 1);
            out.insert(at, s);
        }
        out
    }
}

/// The finding that stands for the folded findings of `kind`.
fn summary(kind: FindingKind, kept: usize, folded: Folded, flow_name: &dyn Fn(usize) -> String) -> Finding {
    let n = folded.total();
    let c = folded.counts;
    let severity = if c.critical > 0 {
        Severity::Critical
    } else if c.warning > 0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    let by_severity: Vec<String> = [(c.critical, "critical"), (c.warning, "warning"), (c.info, "info")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, s)| format!("{n} {s}"))
        .collect();
    let on_flows = match folded.flows {
        0 => String::new(),
        1 => " on 1 flow".to_string(),
        n => format!(" on {n} flows"),
    };
    let findings = if n == 1 { "finding" } else { "findings" };
    let mut examples = folded.examples.kept;
    examples.sort_by(rank);
    let heaviest = examples.first().map(|e| format!("; the heaviest: {}", e.title)).unwrap_or_default();
    Finding {
        severity,
        kind,
        title: format!(
            "{n} more {findings} of kind {kind}{on_flows} ({}), beyond the {kept} listed above{heaviest}",
            by_severity.join(", ")
        ),
        flow: None,
        src_mac: None,
        priority: None,
        evidence: examples
            .iter()
            .filter_map(|e| e.evidence.first().map(|ev| (e, ev)))
            .map(|(e, ev)| EvidenceRef {
                frame: ev.frame,
                ts_ns: ev.ts_ns,
                what: match e.flow {
                    Some(i) => format!("{}: {}", flow_name(i), ev.what),
                    None => ev.what.clone(),
                },
            })
            .collect(),
        weight: folded.weight,
        folded: Some(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: FindingKind, severity: Severity, flow: usize, weight: u64) -> Finding {
        Finding {
            severity,
            kind,
            title: format!("flow {flow}"),
            flow: Some(flow),
            src_mac: None,
            priority: None,
            evidence: vec![EvidenceRef { frame: flow as u64 + 1, ts_ns: 0, what: "bad".into() }],
            weight,
            folded: None,
        }
    }

    #[test]
    fn each_kind_keeps_its_most_important_and_folds_the_rest() {
        let mut s = FindingSink::new(1000, 3);
        for i in 0..1000 {
            s.push(finding(FindingKind::IcrcBad, Severity::Warning, i, i as u64));
        }
        s.push(finding(FindingKind::NetworkLoss, Severity::Critical, 7, 1));
        assert_eq!((s.counts().critical, s.counts().warning), (1, 1000));
        assert_eq!(s.flow_worst()[7], Some(Severity::Critical));
        assert_eq!(s.flow_worst()[500], Some(Severity::Warning));
        let out = s.finish(|i| format!("flow {i}"));
        // The critical one, then the three heaviest bad ICRCs, then their summary.
        let titles: Vec<&str> = out.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(&titles[..4], ["flow 7", "flow 999", "flow 998", "flow 997"]);
        assert_eq!(out.len(), 5);
        let sum = &out[4];
        assert_eq!(sum.folded, Some(997));
        assert_eq!(sum.kind, FindingKind::IcrcBad);
        assert_eq!(sum.weight, (0..997u64).sum::<u64>());
        assert!(sum.title.starts_with(
            "997 more findings of kind icrc_bad on 997 flows (997 warning), beyond the 3 listed above"
        ));
        assert!(sum.title.ends_with("the heaviest: flow 996"), "{}", sum.title);
        let frames: Vec<u64> = sum.evidence.iter().map(|e| e.frame).collect();
        assert_eq!(frames, [997, 996, 995]);
    }

    #[test]
    fn a_summary_takes_the_worst_severity_it_folds() {
        let mut s = FindingSink::new(10, 1);
        s.push(finding(FindingKind::NetworkLoss, Severity::Warning, 0, 100));
        s.push(finding(FindingKind::NetworkLoss, Severity::Critical, 1, 1));
        s.push(finding(FindingKind::NetworkLoss, Severity::Critical, 2, 5));
        s.push(finding(FindingKind::IcrcBad, Severity::Critical, 3, 1_000));
        let out = s.finish(|i| format!("flow {i}"));
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].title, "flow 3");
        assert_eq!(out[1].title, "flow 2");
        // The summary follows the findings of its kind, whatever its weight.
        assert_eq!(out[2].severity, Severity::Critical);
        assert_eq!(out[2].folded, Some(2));
        assert!(out[2].title.contains("(1 critical, 1 warning)"), "{}", out[2].title);
    }

    #[test]
    fn no_limit_keeps_everything() {
        let mut s = FindingSink::new(100, 0);
        for i in 0..100 {
            s.push(finding(FindingKind::IcrcBad, Severity::Warning, i, 1));
        }
        let out = s.finish(|i| format!("flow {i}"));
        assert_eq!(out.len(), 100);
        assert!(out.iter().all(|f| f.folded.is_none()));
    }
}
