//! The text of `rocescope compare`: verdicts first, worst first; then each capture point's
//! figures side by side (before, after, change, whether beyond noise), the marks of data,
//! ACK/NAKs and CNPs, what is on one side only, and the reports' findings per kind. Every
//! line fits 100 columns; names from the outside world are escaped.

use crate::compare_cmd::{Document, Side, SideKind};
use rocescope_analyzer::compare::{ClassMarks, MarksPair, PointComparison, Row};
use rocescope_analyzer::report::Severity;
use rocescope_capture::text::escape;
use std::fmt::Write;

/// The widest line.
pub const WIDTH: usize = 100;

/// Render the comparison for the terminal.
pub fn render(d: &Document<'_>) -> String {
    let mut o = String::new();
    side_line(&mut o, "BEFORE", d.before);
    side_line(&mut o, "AFTER ", d.after);
    let c = d.comparison;
    pairing(&mut o, c);
    let _ = writeln!(
        o,
        "\nVERDICTS ({} critical, {} warning, {} info; gate --fail-on {}: {})",
        c.counts.critical,
        c.counts.warning,
        c.counts.info,
        d.gate.fail_on,
        if d.gate.nothing_to_compare {
            "NOTHING TO COMPARE"
        } else if d.gate.failed {
            "FAILED"
        } else {
            "passed"
        }
    );
    if c.nothing_to_compare {
        let _ = writeln!(o, "  neither side holds any RoCE: nothing was compared (status 5, never a pass)");
    } else if c.verdicts.is_empty() {
        let _ = writeln!(o, "  no change beyond noise and thresholds");
    }
    for v in &c.verdicts {
        let sev = match v.severity {
            Severity::Critical => "CRITICAL",
            Severity::Warning => "WARNING ",
            Severity::Info => "INFO    ",
        };
        let at = match &v.point {
            Some(p) if c.points.len() > 1 || !c.unmatched.iter().all(|u| u.priority.is_some()) => {
                format!(" [{}]", escape(p))
            }
            _ => String::new(),
        };
        wrap(&mut o, &format!("{sev} {}{at}", v.title), 9);
    }
    capture_rows(&mut o, &c.rows);
    counters(&mut o, &c.counters);
    for p in &c.points {
        point(&mut o, p);
    }
    if !c.unmatched.is_empty() {
        let _ = writeln!(o, "\nONLY ON ONE SIDE");
        for u in &c.unmatched {
            let what = match u.priority {
                Some(p) => format!("priority {p}"),
                None => "the whole capture point".into(),
            };
            wrap(
                &mut o,
                &format!("  {:<6} {}: {what}, {} RoCE packets", u.side, escape(&u.point), u.packets),
                9,
            );
        }
    }
    nccl(&mut o, c);
    if !c.findings.is_empty() {
        let _ = writeln!(o, "\nFINDINGS (the reports' own, per kind)   before   after");
        for f in &c.findings {
            let mark = if f.before != f.after { "  *" } else { "" };
            let _ = writeln!(o, "  {:<36} {:>7} {:>7}{mark}", f.kind, f.before, f.after);
        }
    }
    let trimmed: Vec<&str> = o.lines().map(str::trim_end).collect();
    crate::stdio::safe_text(&(trimmed.join("\n") + "\n"))
}

fn side_line(o: &mut String, label: &str, s: &Side) {
    let kind = match s.kind {
        SideKind::Capture => "capture",
        SideKind::ReportJson => "report JSON",
        SideKind::Parquet => "Parquet",
    };
    let files: Vec<String> = s.files.iter().map(|f| escape(f).to_string()).collect();
    let mut notes = format!("{kind}, {} point{}", s.points.len(), if s.points.len() == 1 { "" } else { "s" });
    if s.sampled {
        notes.push_str(", sampled");
    }
    if let Some(share) = s.capture_share {
        notes.push_str(&format!(", holds ~{:.0}% of its traffic", (share * 100.0).round().max(1.0)));
    }
    if s.partial {
        notes.push_str(", PARTIAL");
    }
    if let Some(w) = &s.window {
        notes.push_str(&format!(", window {}", crate::window::describe(w)));
    }
    wrap(o, &format!("{label} {} ({notes})", files.join(" + ")), 7);
}

/// How the capture points were paired, when a side has several (one on each side pair
/// whatever their names, which goes without saying).
fn pairing(o: &mut String, c: &rocescope_analyzer::compare::Comparison) {
    let p = &c.pairing;
    let how = match (p.by, &p.before_root, &p.after_root) {
        ("one_each", _, _) => return,
        ("path_below_root", b, a) => {
            let root = |r: &Option<String>| {
                r.as_deref().map_or_else(|| "(none)".to_string(), |r| escape(r).to_string())
            };
            format!("by their path below each side's directory ({} and {})", root(b), root(a))
        }
        _ => "by name".to_string(),
    };
    let alone = c.unmatched.iter().filter(|u| u.priority.is_none()).count();
    let rest = if alone > 0 { format!(", {alone} on one side only") } else { String::new() };
    wrap(o, &format!("POINTS {how}: {} paired{rest}", p.paired), 7);
}

/// Write `line`, wrapped at [`WIDTH`] columns on spaces, continuation lines indented by
/// `indent`. Columns, not characters: a CJK character takes two, a combining mark none
/// (`unicode-width`). Linear in the line: each character is looked at once, so a point
/// named with millions of characters costs milliseconds (issue 40: a `Vec<char>` drained
/// per line took 17-20 s for a 4 M-character name).
fn wrap(o: &mut String, line: &str, indent: usize) {
    use unicode_width::UnicodeWidthChar;
    let mut cur = String::new();
    // The columns `cur` takes.
    let mut cols = 0usize;
    // At the start of a line (nothing but the indent yet): no space before the next word.
    let mut fresh = true;
    let new_line = |o: &mut String, cur: &mut String, cols: &mut usize| {
        let _ = writeln!(o, "{}", cur.trim_end());
        cur.clear();
        cur.extend(std::iter::repeat_n(' ', indent));
        *cols = indent;
    };
    for word in line.split(' ') {
        // Control characters (the line feed a heading starts with) take no column.
        let width: usize = word.chars().map(|c| c.width().unwrap_or(0)).sum();
        if !fresh && cols + 1 + width > WIDTH && cols > indent {
            new_line(o, &mut cur, &mut cols);
            fresh = true;
        }
        if !fresh {
            cur.push(' ');
            cols += 1;
        }
        if cols + width <= WIDTH {
            cur.push_str(word);
            cols += width;
        } else {
            // A word longer than a line is cut into pieces, each filling its line.
            for c in word.chars() {
                let w = c.width().unwrap_or(0);
                if cols + w > WIDTH && cols > indent {
                    new_line(o, &mut cur, &mut cols);
                }
                cur.push(c);
                cols += w;
            }
        }
        fresh = false;
    }
    let _ = writeln!(o, "{}", cur.trim_end());
}

/// The label and unit of a row, and how its values are written.
fn label(metric: &str) -> &'static str {
    match metric {
        "throughput_gbps" => "throughput (Gb/s)",
        "ce_fraction" => "CE fraction (data)",
        "cnps_per_s" => "CNPs per second",
        "cnps_carried_per_s" => "CNPs carried per second",
        "pause_us_per_s" => "paused (µs per s)",
        "loss_per_million" => "loss per M packets",
        "resends_per_million" => "resends per M packets",
        "timeouts" => "timeouts",
        "ack_p50_ns" => "ACK latency p50",
        "ack_p99_ns" => "ACK latency p99",
        "read_p50_ns" => "READ latency p50",
        "read_p99_ns" => "READ latency p99",
        "qps" => "QPs sending data",
        "connections" => "connections",
        "pmtu" => "path MTU",
        _ => "?",
    }
}

fn value(metric: &str, v: Option<f64>) -> String {
    let Some(v) = v else { return "-".into() };
    match metric {
        "ce_fraction" => format!("{:.3}%", v * 100.0),
        "throughput_gbps" => format!("{v:.3}"),
        "ack_p50_ns" | "ack_p99_ns" | "read_p50_ns" | "read_p99_ns" => {
            if v >= 10e6 {
                format!("{:.2} ms", v / 1e6)
            } else {
                format!("{:.1} µs", v / 1e3)
            }
        }
        "cnps_per_s"
        | "cnps_carried_per_s"
        | "pause_us_per_s"
        | "loss_per_million"
        | "resends_per_million" => {
            if v >= 100.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            }
        }
        _ => format!("{v:.0}"),
    }
}

fn change(r: &Row) -> String {
    match (r.before, r.after, r.ratio) {
        (Some(b), Some(a), _) if a == b => "=".into(),
        (Some(_), Some(_), Some(x)) if x >= 10.0 => format!("{x:.0}x"),
        (Some(_), Some(_), Some(x)) => format!("{:+.0}%", (x - 1.0) * 100.0),
        (Some(_), Some(a), None) if a > 0.0 => "from 0".into(),
        _ => "".into(),
    }
}

fn noise(r: &Row) -> &'static str {
    match (r.beyond_noise, r.change) {
        (Some(true), _) => "BEYOND",
        (Some(false), Some(c)) if c != 0.0 => "noise",
        (Some(false), _) => "",
        // A latency from the flows' summaries (a side without samples): never judged.
        (None, Some(c)) if c != 0.0 && r.noise == "summaries" => "no samples: not judged",
        (None, Some(c)) if c != 0.0 && r.noise == "samples" => "few samples",
        (None, Some(c)) if c != 0.0 => "n/a",
        (None, _) => "",
    }
}

/// A latency's 95% interval, `12.0–15.5 µs` (`-` where none).
fn interval(metric: &str, i: Option<rocescope_analyzer::compare::noise::Interval>) -> String {
    let Some(i) = i else { return "-".into() };
    let (lo, hi) = (value(metric, Some(i.lo)), value(metric, Some(i.hi)));
    // One unit, after the upper end.
    match (lo.rsplit_once(' '), hi.rsplit_once(' ')) {
        (Some((l, ul)), Some((_, uh))) if ul == uh => format!("{l}–{hi}"),
        _ => format!("{lo}–{hi}"),
    }
}

fn point(o: &mut String, p: &PointComparison) {
    let name = escape(&p.name).to_string();
    let head = if p.before_name == p.name {
        format!("\nPOINT {name}")
    } else {
        format!("\nPOINT {name} (before: {})", escape(&p.before_name))
    };
    wrap(o, &head, 6);
    let _ = writeln!(
        o,
        "  spans {:.3} s before, {:.3} s after",
        p.before_span_ns as f64 / 1e9,
        p.after_span_ns as f64 / 1e9
    );
    let _ = writeln!(o, "  {:<26}{:>14}{:>14}{:>10}  {:<7}", "", "before", "after", "change", "noise");
    for r in &p.rows {
        row_line(o, r);
    }
    for x in &p.priorities {
        let sides = match x.sides {
            "before" => " (before only)",
            "after" => " (after only)",
            _ => "",
        };
        let _ = writeln!(o, "  priority {}{sides}", x.priority);
        for r in x.rows.iter().filter(|r| r.before.is_some() || r.after.is_some()) {
            row_line(o, r);
        }
    }
    let _ = writeln!(o, "  marks                     before                              after");
    for (class, m) in [("data", &p.data), ("ACK/NAK", &p.ack), ("CNP", &p.cnp)] {
        marks(o, class, m);
    }
}

fn row_line(o: &mut String, r: &Row) {
    let _ = writeln!(
        o,
        "    {:<24}{:>14}{:>14}{:>10}  {}",
        label(r.metric),
        value(r.metric, r.before),
        value(r.metric, r.after),
        change(r),
        noise(r)
    );
    // A latency judged on samples: each side's interval and samples, on a line of its own.
    if r.noise == "samples" && (r.before_interval.is_some() || r.after_interval.is_some()) {
        let n = |x: Option<u64>| x.map_or("-".to_string(), |n| n.to_string());
        let _ = writeln!(
            o,
            "      {:<21}{:>15}{:>15}  {} / {} samples",
            "95% interval",
            interval(r.metric, r.before_interval),
            interval(r.metric, r.after_interval),
            n(r.before_samples),
            n(r.after_samples)
        );
    }
}

/// `26: 12000` / `26,48: 40` / `untagged: 10`, the biggest first, as many as fit.
fn shares(m: &ClassMarks, pcp: bool, room: usize) -> String {
    if m.packets == 0 {
        return "-".into();
    }
    let list = if pcp { &m.pcp } else { &m.dscp };
    let mut out = String::new();
    for (i, s) in list.iter().enumerate() {
        let v = if s.values.is_empty() {
            "untagged".to_string()
        } else {
            s.values.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
        };
        let item = format!("{}{v}: {}", if out.is_empty() { "" } else { "  " }, s.packets);
        if out.len() + item.len() > room {
            let _ = write!(out, " +{}", list.len() - i);
            break;
        }
        out.push_str(&item);
    }
    out
}

fn ecn(m: &ClassMarks) -> String {
    let all: u64 = m.ecn.iter().fold(0u64, |a, x| a.saturating_add(*x));
    if all == 0 {
        return "-".into();
    }
    let names = ["Not-ECT", "ECT0", "ECT1", "CE"];
    names
        .iter()
        .zip(m.ecn)
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} {:.1}%", n as f64 * 100.0 / all as f64))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The values a class carried, without their counts (what a `*` compares).
fn values_of(m: &ClassMarks, what: &str) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = match what {
        "DSCP" => m.dscp.iter().map(|s| s.values.clone()).collect(),
        "PCP" => m.pcp.iter().map(|s| s.values.clone()).collect(),
        _ => {
            (0..4u8).filter(|i| m.ecn.get(usize::from(*i)).is_some_and(|n| *n > 0)).map(|i| vec![i]).collect()
        }
    };
    v.sort();
    v
}

fn marks(o: &mut String, class: &str, m: &MarksPair) {
    if m.before.packets == 0 && m.after.packets == 0 {
        return;
    }
    let lines = [
        ("DSCP", shares(&m.before, false, 34), shares(&m.after, false, 34)),
        ("PCP", shares(&m.before, true, 34), shares(&m.after, true, 34)),
        ("ECN", ecn(&m.before), ecn(&m.after)),
    ];
    for (what, b, a) in lines {
        if class != "data" && what == "ECN" {
            continue;
        }
        // `*`: the values differ (not only their counts).
        let mark = if values_of(&m.before, what) != values_of(&m.after, what) { "*" } else { " " };
        // The ECN row is counted by flow (a flow's codepoints go to its main class, and a
        // QP sending both ways has its ACKs and CNPs in its data flow); the priorities'
        // "CE fraction (data)" is the per-packet figure.
        let label = if what == "ECN" { format!("{class} ECN (by flow)") } else { format!("{class} {what}") };
        let _ = writeln!(o, "  {mark} {:<22}{:<36}{}", label, b, a);
    }
}

/// The NCCL settings on both sides (`--nccl-env`): each variable's verdict before and after,
/// `*` where it changed, and what would match the wire after a mismatch.
fn nccl(o: &mut String, c: &rocescope_analyzer::compare::Comparison) {
    if c.nccl.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nNCCL SETTINGS AGAINST THE WIRE                        before       after");
    for n in &c.nccl {
        let name = match &n.value {
            Some(v) => format!("{}={}", n.name, escape(v)),
            None => format!("{} (unset)", n.name),
        };
        let mark = if n.before != n.after { "  *" } else { "" };
        let verdict = |v: &str| v.replace('_', " ");
        // A long value (NCCL_IB_HCA's device list) goes on a line of its own.
        let name = if name.chars().count() > 48 {
            wrap(o, &format!("  {name}"), 6);
            String::new()
        } else {
            name
        };
        let _ = writeln!(o, "  {:<48} {:>11} {:>11}{mark}", name, verdict(&n.before), verdict(&n.after));
        if let Some(w) = &n.would_match {
            wrap(o, &format!("      would match after: {}={}", n.name, escape(w)), 6);
        }
    }
}

/// The capture-wide rows (RoCE version, address family), when either side has some.
fn capture_rows(o: &mut String, rows: &[Row]) {
    let shown: Vec<&Row> =
        rows.iter().filter(|r| r.before.unwrap_or(0.0) + r.after.unwrap_or(0.0) > 0.0).collect();
    if shown.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nROCE VERSION AND ADDRESS FAMILY");
    for r in shown {
        let what =
            if r.metric == "roce_v1_share" { "RoCEv1 share of RoCE" } else { "IPv6 share of flows' packets" };
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{:.1}%", x * 100.0));
        let noise = match r.beyond_noise {
            Some(true) => "beyond noise",
            Some(false) => "within noise",
            None => "",
        };
        let _ = writeln!(o, "  {what:<30} {:>8} → {:<8} {noise}", pct(r.before), pct(r.after));
    }
}

/// The NIC counters' deltas on both sides (`--counters-before/--counters-after`, or report
/// documents made with `--counters`), when both carry two snapshots.
fn counters(o: &mut String, rows: &[rocescope_analyzer::compare::CounterChange]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nNIC COUNTERS (deltas between each side's snapshots)   before       after  noise");
    for r in rows {
        let v = |x: Option<u64>| x.map_or("-".to_string(), |n| n.to_string());
        let noise = match r.beyond_noise {
            Some(true) => "BEYOND",
            Some(false) => "noise",
            None => "n/a",
        };
        let mut name = escape(&r.label()).to_string();
        if name.chars().count() > 48 {
            name = name.chars().take(47).chain(['…']).collect();
        }
        let _ = writeln!(o, "  {name:<48} {:>11} {:>11}  {noise}", v(r.before), v(r.after));
    }
}

#[cfg(test)]
mod tests {
    use super::{wrap, WIDTH};
    use unicode_width::UnicodeWidthStr;

    /// Every line of `text` fits [`WIDTH`] columns.
    fn widest(text: &str) -> usize {
        text.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
    }

    #[test]
    fn wrapping_counts_columns_not_characters() {
        // A CJK point name: two columns a character (it gave 176-column lines).
        let name: String = std::iter::repeat_n('點', 300).collect();
        let mut o = String::new();
        wrap(&mut o, &format!("  before {name}: the whole capture point, 12 RoCE packets"), 9);
        assert!(widest(&o) <= WIDTH, "{o}");
        assert_eq!(o.matches('點').count(), 300, "nothing lost");
        assert!(o.lines().filter(|l| l.contains('點')).count() >= 6, "{o}");
        // ASCII as before: words move whole, a long one is cut to fill its lines.
        let mut o = String::new();
        let long = "x".repeat(250);
        wrap(&mut o, &format!("WARNING  short words then {long} end"), 9);
        let lines: Vec<&str> = o.lines().collect();
        assert_eq!(lines.first().copied(), Some("WARNING  short words then"));
        assert!(lines.iter().all(|l| l.len() <= WIDTH), "{o}");
        assert_eq!(o.matches('x').count(), 250);
        assert!(lines.last().is_some_and(|l| l.ends_with(" end")), "{o}");
    }

    /// Wrapping is linear in the line: a name 8 times longer costs about 8 times as much
    /// (the drained `Vec<char>` made it 64 times; a 4 M-character name took 17-20 s).
    /// Best of three runs each, and a generous bound: the machine is shared.
    #[test]
    fn wrapping_a_huge_name_is_linear() {
        let run = |n: usize| {
            let name = "n".repeat(n);
            let line = format!("  before {name}: the whole capture point");
            (0..3)
                .map(|_| {
                    let t = std::time::Instant::now();
                    let mut o = String::new();
                    wrap(&mut o, &line, 9);
                    assert_eq!(o.matches('n').count(), n + 1);
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let (small, large) = (run(100_000), run(800_000));
        assert!(large < small * 24.0 + 0.05, "{small:.4} s for 100,000 characters, {large:.4} s for 800,000");
    }
}
