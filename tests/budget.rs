//! The instruction budget (issue 39, bench/budget.toml, bench/instructions.py): the budget
//! file holds what the check needs for every capture and output, and the check passes
//! figures at their budget, fails one over it (saying what was measured, the budget and how
//! to raise it), and points out one far under it. The measuring itself (valgrind) runs in
//! `.ci/run`; here the checker gets measurements made up from the budget file's own figures.

mod common;

use serde_json::json;
use std::path::PathBuf;
use std::process::{Command, Output};

const MODES: [&str; 2] = ["quiet", "json"];

fn budget() -> toml::Table {
    let text = std::fs::read_to_string(common::root().join("bench/budget.toml")).expect("bench/budget.toml");
    text.parse().expect("bench/budget.toml is TOML")
}

/// The captures of the budget file: (name, its table).
fn captures(b: &toml::Table) -> Vec<(String, toml::Table)> {
    b.iter().filter_map(|(k, v)| v.as_table().map(|t| (k.clone(), t.clone()))).collect()
}

fn number(v: Option<&toml::Value>) -> f64 {
    match v {
        Some(toml::Value::Integer(i)) => *i as f64,
        Some(toml::Value::Float(f)) => *f,
        other => panic!("a number, not {other:?}"),
    }
}

/// Two measurements of every capture and output, each `scale` times its budget (both the
/// per-frame slope and the fixed part), except `which` (capture, output), scaled by `odd`.
fn measured(b: &toml::Table, which: Option<(&str, &str)>, odd: f64) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for (name, c) in captures(b) {
        let frames: Vec<i64> =
            c["frames"].as_array().expect("frames").iter().map(|n| n.as_integer().expect("a size")).collect();
        let mut modes = serde_json::Map::new();
        for mode in MODES {
            let t = c[mode].as_table().expect("an output's budget");
            let scale = if which == Some((name.as_str(), mode)) { odd } else { 1.0 };
            let (per_frame, fixed) = (number(t.get("per_frame")) * scale, number(t.get("fixed")) * scale);
            let points: Vec<_> =
                frames.iter().map(|&n| json!([n, (fixed + per_frame * n as f64).round() as i64])).collect();
            modes.insert(mode.into(), json!(points));
        }
        out.insert(name, modes.into());
    }
    out.into()
}

/// `bench/instructions.py --measured` on `m`, or None (and a skip) without Python 3.11.
fn check(m: &serde_json::Value) -> Option<Output> {
    let py = std::env::var("ROCESCOPE_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&py).args(["-c", "import tomllib"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        common::skip("the instruction budget's checker needs Python 3.11 or later (tomllib)");
        return None;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file: PathBuf = dir.path().join("measured.json");
    std::fs::write(&file, m.to_string()).expect("write the measurements");
    let o = Command::new(&py)
        .arg(common::root().join("bench/instructions.py"))
        .arg("--measured")
        .arg(&file)
        .output()
        .expect("run bench/instructions.py");
    Some(o)
}

#[test]
fn the_budget_file_covers_every_capture_and_output() {
    let b = budget();
    let margin = number(b.get("margin"));
    let far_under = number(b.get("far_under"));
    assert!(margin > 0.0 && margin <= 0.05, "a margin of a few per cent: {margin}");
    assert!(far_under > margin && far_under < 0.5, "far under: {far_under}");
    let caps = captures(&b);
    assert!(caps.len() >= 3, "bulk, mixed and a many-QP capture: {}", caps.len());
    for (name, c) in &caps {
        let frames = c["frames"].as_array().expect("frames");
        let sizes: Vec<i64> = frames.iter().filter_map(|n| n.as_integer()).collect();
        assert!(sizes.len() == 2 && sizes[0] < sizes[1], "{name}: two sizes, the smaller first");
        assert!(c["samplegen"].as_array().is_some_and(|a| !a.is_empty()), "{name}: samplegen's arguments");
        for mode in MODES {
            let t = c.get(mode).and_then(|v| v.as_table()).unwrap_or_else(|| panic!("[{name}.{mode}]"));
            assert!(number(t.get("per_frame")) > 0.0 && number(t.get("fixed")) > 0.0, "[{name}.{mode}]");
            let why = t.get("why").and_then(|v| v.as_str()).unwrap_or_default();
            // When (a date) and why.
            assert!(
                why.len() > 12 && why.as_bytes().get(..4).is_some_and(|y| y.iter().all(u8::is_ascii_digit)),
                "[{name}.{mode}] why = {why:?}: a date, then why"
            );
        }
    }
    // The check runs in CI, after the tests.
    let ci = std::fs::read_to_string(common::root().join(".ci/run")).expect(".ci/run");
    assert!(ci.contains("bench/instructions.py"), ".ci/run checks the budget");
}

#[test]
fn figures_at_their_budget_pass_and_are_printed() {
    let b = budget();
    let Some(o) = check(&measured(&b, None, 1.0)) else { return };
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    for (name, _) in captures(&b) {
        for opt in ["-q", "--json"] {
            let rows: Vec<&str> = out
                .lines()
                .filter(|l| l.trim_start().starts_with(&format!("{name}, report {opt} ")))
                .collect();
            assert_eq!(rows.len(), 2, "per frame and fixed for {name} {opt}:\n{out}");
            assert!(rows.iter().all(|r| r.ends_with(" ok")), "{rows:?}");
        }
    }
    assert!(!out.contains("far under"), "{out}");
}

#[test]
fn a_figure_over_budget_and_margin_fails_and_says_how_to_raise_it() {
    let b = budget();
    let (name, c) = captures(&b).into_iter().next().expect("a capture");
    let margin = number(b.get("margin"));
    let Some(o) = check(&measured(&b, Some((&name, "json")), 1.0 + 2.0 * margin)) else { return };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let budget = number(c["json"].as_table().and_then(|t| t.get("per_frame"))).round() as u64;
    let line = err
        .lines()
        .find(|l| l.starts_with(&format!("FAILED: {name}, report --json: per frame")))
        .unwrap_or_else(|| panic!("the failure names the capture, the output and the figure:\n{err}"));
    let thousands = |n: u64| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(ch);
        }
        out
    };
    assert!(line.contains(&format!("over the budget {}", thousands(budget))), "{line}");
    assert!(line.contains(&format!("[{name}.json]")) && line.contains("raise `per_frame`"), "{line}");
    assert!(line.contains("why"), "{line}");
    // The other output of the same capture, and the figures just at budget, pass.
    assert_eq!(err.lines().filter(|l| l.starts_with("FAILED")).count(), 2, "per frame and fixed:\n{err}");
    // The figures are printed on a failure too.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out
        .lines()
        .any(|l| l.trim_start().starts_with(&format!("{name}, report --json ")) && l.ends_with("OVER")));
}

#[test]
fn within_the_margin_passes_and_far_under_is_pointed_out() {
    let b = budget();
    let caps = captures(&b);
    let (name, _) = caps.last().expect("a capture");
    let margin = number(b.get("margin"));
    let Some(o) = check(&measured(&b, Some((name, "quiet")), 1.0 + margin / 2.0)) else { return };
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let far_under = number(b.get("far_under"));
    let Some(o) = check(&measured(&b, Some((name, "quiet")), 1.0 - 2.0 * far_under)) else { return };
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "far under warns, it does not fail: {out}");
    let notes: Vec<&str> = out.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(notes.len(), 2, "per frame and fixed:\n{out}");
    assert!(notes
        .iter()
        .all(|l| l.contains(&format!("{name}, report -q")) && l.contains("lower the budget")));
}

#[test]
fn a_missing_measurement_is_not_a_pass() {
    let b = budget();
    let mut m = measured(&b, None, 1.0);
    let (name, _) = captures(&b).into_iter().next().expect("a capture");
    m.as_object_mut().expect("an object").remove(&name);
    let Some(o) = check(&m) else { return };
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("no measurement of {name}")));
}
