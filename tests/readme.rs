//! README.md and the pages in docs/ cannot drift: every example output they show (a block
//! after `<!-- output of: rocescope ARGS -->`) is what that command prints today, their Rust
//! code is doc-tested, their links to files and headings resolve, and the setup command exits
//! as the README says. The README stays a page for users: under 450 lines, linking every page
//! in docs/. (Every `rocescope` command line in their `sh` blocks is parsed against the
//! current command line by a unit test in src/cli.rs; the exit-status table is held to
//! src/exit.rs there and in tests/exit_status.rs.)

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// README.md and every page in docs/: (path from the repository's root, text).
fn pages() -> Vec<(PathBuf, String)> {
    let root = common::root();
    let mut paths = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok())
        .map(|e| Path::new("docs").join(e.file_name()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(root.join(&p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

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
    let mut shown = 0;
    for (page, text) in pages() {
        let ex = examples(&text);
        if page == Path::new("README.md") {
            assert!(ex.len() >= 3, "the README shows at least the decode, report and compare outputs");
        }
        for (args, block) in ex {
            shown += 1;
            let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
                .args(&args)
                .current_dir(common::root())
                .output()
                .expect("run rocescope");
            // `compare` of a change fails its gate (4, the same as report's) by design.
            let gate = if args.first().is_some_and(|a| a == "compare") { 4 } else { 3 };
            assert!(
                matches!(o.status.code(), Some(0)) || o.status.code() == Some(gate),
                "{}: rocescope {}: {}",
                page.display(),
                args.join(" "),
                String::from_utf8_lossy(&o.stderr)
            );
            let text = String::from_utf8_lossy(&o.stdout);
            let got: Vec<&str> = text.lines().collect();
            if let Err(e) = shown_in(&block, &got) {
                panic!(
                    "{} example `rocescope {}` is stale: {e}\n--- the output today:\n{text}",
                    page.display(),
                    args.join(" ")
                );
            }
        }
    }
    assert!(shown >= 15, "{shown} examples: the README's and those moved to docs/");
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

/// Rust code in the README and in docs/ is a crate README's, which `cargo test` compiles as
/// a doc test: so the documentation's code compiles too.
#[test]
fn documented_rust_code_is_doc_tested() {
    let crate_readmes: String = ["decoder", "capture", "analyzer"]
        .iter()
        .map(|c| std::fs::read_to_string(common::root().join(c).join("README.md")).unwrap())
        .collect();
    let mut blocks = 0;
    for (page, text) in pages() {
        let mut rest = text.as_str();
        while let Some(i) = rest.find("```rust") {
            let body = &rest[i..];
            let end = body[3..].find("```").map(|e| e + 6).expect("closed block");
            let block = &body[..end];
            assert!(
                crate_readmes.contains(block),
                "{}: code not in a doc-tested crate README:\n{block}",
                page.display()
            );
            blocks += 1;
            rest = &body[end..];
        }
    }
    assert!(blocks >= 1, "docs/library.md shows the analyzer's example");
    for c in ["decoder", "capture", "analyzer"] {
        let lib = std::fs::read_to_string(common::root().join(c).join("src/lib.rs")).unwrap();
        assert!(lib.contains("README.md"), "{c}'s README is included as a doc test");
    }
}

/// The README is a page for users: short, the two set-up commands first, every page in docs/
/// linked from it.
#[test]
fn the_readme_is_short_and_links_every_page() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines < 450, "README.md has {lines} lines: move the detail to a page in docs/");
    // The first two code blocks are the set-up commands: install and run, then the tests.
    let blocks: Vec<&str> = readme.split("```").skip(1).step_by(2).take(2).collect();
    assert!(blocks[0].starts_with("sh\nsudo=") && blocks[0].contains("cargo run --release"), "{}", blocks[0]);
    assert_eq!(blocks[1], "sh\nbash .ci/run\n");
    let linked = links(&readme);
    for (page, _) in pages().iter().skip(1) {
        let name = page.to_string_lossy().to_string();
        assert!(linked.iter().any(|(target, _)| *target == name), "README.md does not link {name}");
    }
}

/// The README's performance table is the newest one in docs/performance.md, which comes first
/// there.
#[test]
fn the_readme_performance_table_is_the_newest() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let perf = std::fs::read_to_string(common::root().join("docs/performance.md")).unwrap();
    let section = &readme[readme.find("\n## Performance").expect("a Performance section")..];
    let table: String = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(table.lines().count() > 3, "{table}");
    let at = perf.find(&table).expect("docs/performance.md holds the README's table");
    assert!(
        perf[..at].lines().all(|l| !l.starts_with('|')),
        "the README's table is the first in docs/performance.md"
    );
}

/// Every link from the README and the pages in docs/ to a file of the repository names one
/// that exists, and a `#heading` a heading of that page (as GitHub makes its anchors).
#[test]
fn links_resolve() {
    let root = common::root();
    let mut checked = 0;
    for (page, text) in pages() {
        let dir = page.parent().unwrap_or(Path::new(""));
        for (target, anchor) in links(&text) {
            let file = if target.is_empty() { page.clone() } else { normalise(&dir.join(&target)) };
            let path = root.join(&file);
            assert!(path.exists(), "{}: link to {target}: {} does not exist", page.display(), file.display());
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&path).unwrap_or_default();
                let anchors = heading_anchors(&target_text);
                assert!(
                    anchors.contains(&anchor),
                    "{}: link to {target}#{anchor}: no such heading (there: {anchors:?})",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} links checked");
}

/// The local links of a Markdown text outside code blocks, relative to its page: (path, anchor).
/// Links with a scheme (`https://`) are left out.
fn links(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            rest = &after[end..];
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p.to_string(), Some(a.to_string())),
                None => (target.to_string(), None),
            };
            out.push((path, anchor));
        }
    }
    out
}

/// `a/../b` as `b`: the path a link names, from the repository's root.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The anchors GitHub gives a Markdown page's headings: lower case, letters, digits, `-` and
/// `_` kept, spaces made `-`, anything else dropped; a repeated heading gets `-1`, `-2`, ...
fn heading_anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else { continue };
        if fenced || !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = out
            .iter()
            .filter(|a| {
                **a == slug || a.strip_prefix(&format!("{slug}-")).is_some_and(|s| s.parse::<u32>().is_ok())
            })
            .count();
        out.push(if n == 0 { slug } else { format!("{slug}-{n}") });
    }
    out
}

#[test]
fn anchors_as_github_makes_them() {
    let a = heading_anchors("# rocescope\n## Set up (fresh Debian 12, Rust ≥ 1.85 from rustup)\n```sh\n# not a heading\n```\n### Before and after: `rocescope compare`\n## Set up (fresh Debian 12, Rust ≥ 1.85 from rustup)\n");
    assert_eq!(
        a,
        [
            "rocescope",
            "set-up-fresh-debian-12-rust--185-from-rustup",
            "before-and-after-rocescope-compare",
            "set-up-fresh-debian-12-rust--185-from-rustup-1"
        ]
    );
    let l = links("see [a](docs/a.md), [b](../b.md#x-y) and [w](https://example.com)\n```\n[c](c.md)\n```\n");
    assert_eq!(l, [("docs/a.md".to_string(), None), ("../b.md".to_string(), Some("x-y".to_string()))]);
}
