//! Fuzz the reading of report documents, as `rocescope compare` reads a side given as a
//! `report --json` document: the facts are read as the bytes stream by, checked against the
//! schema's ranges (rocescope_analyzer::compare::schema), and a document that passes is
//! profiled and compared, with itself, with the other document and with an empty report,
//! and the comparison serialised to JSON. A document is refused with an error or compared;
//! any panic is a bug, and so is an out-of-schema value that reaches the comparison.
//!
//! Format: two documents separated by a NUL byte (JSON never holds one raw); without one,
//! the input is compared with itself. `fuzz/seed.sh` seeds it with reports of the samples.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope_analyzer::compare::{schema, Comparison, Limits, Profile, ReportFacts};

/// The facts of `doc`, when they read; those read are within the schema.
fn facts(doc: &[u8]) -> Option<ReportFacts> {
    let f = ReportFacts::from_reader(doc).ok()?;
    assert_eq!(schema::check(&f), Ok(()), "a document read with a value out of the schema");
    Some(f)
}

fuzz_target!(|data: &[u8]| {
    let (before, after) = match data.iter().position(|b| *b == 0) {
        Some(i) => (data.get(..i).unwrap_or_default(), data.get(i + 1..).unwrap_or_default()),
        None => (data, data),
    };
    let (Some(b), a) = (facts(before), facts(after)) else { return };
    let empty = Profile::from_facts(&ReportFacts::default());
    let pb = Profile::from_facts(&b);
    let limits = Limits::default();
    let mut sides = vec![(&pb, &pb), (&pb, &empty), (&empty, &pb)];
    let pa = a.as_ref().map(Profile::from_facts);
    if let Some(pa) = &pa {
        sides.push((&pb, pa));
        sides.push((pa, &pb));
    }
    for (x, y) in sides {
        let c = Comparison::new(x, y, &limits);
        let json = serde_json::to_string(&c).expect("a comparison serialises");
        assert!(!json.is_empty());
    }
});
