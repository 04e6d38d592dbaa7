//! `compare --junit FILE`: the change gate as a JUnit XML report, the form CI systems (GitLab,
//! Jenkins, GitHub's test reporters) show test results in. Each verdict is a test case named
//! after its rule and where it applies; a verdict at or above the gate's level (`--fail-on`)
//! is a failure carrying its sentence, the others pass with the sentence as their output.
//! A comparison with no verdict is one passing case, and "nothing to compare" (no RoCE on
//! either side) one error: a pipeline never reads either as a silent pass. Written with the
//! `quick-junit` crate (cargo-nextest's).

use crate::compare_cmd::Document;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use rocescope_analyzer::compare::Verdict;
use rocescope_analyzer::report::Severity;

/// The suite's name in the report.
const SUITE: &str = "rocescope compare";

/// The verdict's severity in words.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "CRITICAL",
        Severity::Warning => "WARNING",
        Severity::Info => "INFO",
    }
}

/// A test case's name: the rule, and the point and priority it is about.
fn case_name(v: &Verdict) -> String {
    let mut name = v.kind.to_string();
    if let Some(f) = &v.finding {
        name.push_str(&format!(" ({f})"));
    }
    if let Some(p) = &v.point {
        name.push_str(&format!(" at {p}"));
    }
    if let Some(p) = v.priority {
        name.push_str(&format!(" priority {p}"));
    }
    name
}

/// One verdict as a test case: a failure when it fails the gate.
fn case(v: &Verdict, fails: bool) -> TestCase {
    let text = format!("{}: {}", severity(v.severity), v.title);
    let status = if fails {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(text.clone()).set_type(severity(v.severity)).set_description(text.clone());
        s
    } else {
        TestCaseStatus::success()
    };
    let mut c = TestCase::new(case_name(v), status);
    c.set_classname(format!("{SUITE}.{}", v.kind));
    if !fails {
        c.set_system_out(text);
    }
    c
}

/// The JUnit XML of a comparison and its gate.
pub fn render(doc: &Document<'_>, level: Option<Severity>) -> Result<String, quick_junit::SerializeError> {
    let mut suite = TestSuite::new(SUITE);
    let c = doc.comparison;
    if c.nothing_to_compare {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
        s.set_message("nothing to compare: neither side holds any RoCE (exit status 5)");
        suite.add_test_case(TestCase::new("nothing_to_compare", s));
    } else if c.verdicts.is_empty() {
        let mut t = TestCase::new("no change beyond noise", TestCaseStatus::success());
        t.set_classname(format!("{SUITE}.gate"));
        suite.add_test_case(t);
    }
    for v in &c.verdicts {
        let fails = level.is_some_and(|l| v.severity <= l);
        suite.add_test_case(case(v, fails));
    }
    let mut report = Report::new(SUITE);
    report.add_test_suite(suite);
    report.to_string()
}
