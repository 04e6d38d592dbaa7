//! README.md cannot drift: every example output it shows (a block after
//! `<!-- output of: rocescope ARGS -->`) is what that command prints today, and the setup
//! command exits as the README says. (Every `rocescope` command line in its `sh` blocks is
//! parsed against the current command line by a unit test in src/cli.rs.)

mod common;

use std::process::Command;

/// (command arguments, the block's lines) for every marked example.
fn examples(readme: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(l) = lines.next() {
        let Some(cmd) = l.trim().strip_prefix("<!-- output of: ").and_then(|c| c.strip_suffix(" -->")) else {
            continue;
        };
        let args: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        assert_eq!(args[0], "rocescope", "{l}");
        assert!(lines.next().is_some_and(|f| f.starts_with("```")), "a code block follows {l}");
        let block: Vec<String> =
            lines.by_ref().take_while(|b| !b.starts_with("```")).map(String::from).collect();
        out.push((args[1..].to_vec(), block));
    }
    out
}

/// `want`'s runs between `...` lines appear in `got`, each run contiguous, in order.
fn shown_in(want: &[String], got: &[&str]) -> Result<(), String> {
    let mut at = 0;
    for run in want.split(|l| l.trim() == "...") {
        if run.is_empty() {
            continue;
        }
        let found = (at..got.len()).find(|&i| {
            got.len() - i >= run.len() && run.iter().zip(&got[i..]).all(|(w, g)| w.trim_end() == g.trim_end())
        });
        match found {
            Some(i) => at = i + run.len(),
            None => return Err(format!("not in the output (in this order):\n{}", run.join("\n"))),
        }
    }
    Ok(())
}

#[test]
fn every_example_output_is_current() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let ex = examples(&readme);
    assert!(ex.len() >= 3, "the README shows at least the decode, report and two-point outputs");
    for (args, block) in ex {
        let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
            .args(&args)
            .current_dir(common::root())
            .output()
            .expect("run rocescope");
        // `compare` of a change fails its gate (4, the same as report's) by design.
        let gate = if args.first().is_some_and(|a| a == "compare") { 4 } else { 3 };
        assert!(
            matches!(o.status.code(), Some(0)) || o.status.code() == Some(gate),
            "rocescope {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout);
        let got: Vec<&str> = text.lines().collect();
        if let Err(e) = shown_in(&block, &got) {
            panic!(
                "README example `rocescope {}` is stale: {e}\n--- the output today:\n{text}",
                args.join(" ")
            );
        }
    }
}

#[test]
fn the_setup_command_does_what_the_readme_says() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let setup = readme.lines().find(|l| l.contains("cargo run --release")).expect("the setup command");
    let args: Vec<&str> =
        setup.split(" -- ").nth(1).expect("cargo run ... -- ARGS").split_whitespace().collect();
    assert_eq!(&args[..3], ["report", "-r", "samples/demo.pcap"]);
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(&args)
        .current_dir(common::root())
        .output()
        .unwrap();
    // "the demo carries deliberate DSCP/PCP violations, so the command exits with status 3"
    assert!(readme.contains("exits with status 3"));
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for section in ["FINDINGS", "CONNECTIONS", "QOS AUDIT"] {
        assert!(
            text.contains(section),
            "findings first, then connections, PFC timelines and the QoS audit: {section}"
        );
    }
    // The test command is .ci/run, and .ci/run runs the whole suite without stopping early.
    assert!(readme.contains("```sh\nbash .ci/run\n```"));
    let ci = std::fs::read_to_string(common::root().join(".ci/run")).unwrap();
    assert!(ci.contains("cargo test --workspace --no-fail-fast"));
}

#[test]
fn the_matcher_itself() {
    let got = ["a", "b", "c", "d"];
    let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(shown_in(&w(&["a", "b", "...", "d"]), &got).is_ok());
    assert!(shown_in(&w(&["a", "c"]), &got).is_err(), "a run must be contiguous");
    assert!(shown_in(&w(&["c", "...", "a"]), &got).is_err(), "in order");
    assert!(shown_in(&w(&["b", "x"]), &got).is_err());
}

/// The README's Rust code is the analyzer README's, which `cargo test` compiles as a doc test:
/// so the README's code compiles too.
#[test]
fn readme_rust_code_is_doc_tested() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let crate_readmes: String = ["decoder", "capture", "analyzer"]
        .iter()
        .map(|c| std::fs::read_to_string(common::root().join(c).join("README.md")).unwrap())
        .collect();
    let mut blocks = 0;
    let mut rest = readme.as_str();
    while let Some(i) = rest.find("```rust") {
        let body = &rest[i..];
        let end = body[3..].find("```").map(|e| e + 6).expect("closed block");
        let block = &body[..end];
        assert!(crate_readmes.contains(block), "README code not in a doc-tested crate README:\n{block}");
        blocks += 1;
        rest = &body[end..];
    }
    assert!(blocks >= 1);
    for c in ["decoder", "capture", "analyzer"] {
        let lib = std::fs::read_to_string(common::root().join(c).join("src/lib.rs")).unwrap();
        assert!(lib.contains("README.md"), "{c}'s README is included as a doc test");
    }
}
