//! `report --nccl-env FILE` (docs/verdicts.md "NCCL settings against the wire"): the sample
//! job in `samples/nccl/` checked against the environment files its generator wrote, each
//! run giving the exit status, the verdicts and the values that would match the generator
//! worked out; the findings, the text section, bad files, and reports without the option.

mod common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples/nccl").join(name)
}

fn report(env: &str, extra: &[&str]) -> (Value, Option<i32>) {
    let pcap = sample("nccl-job.pcap");
    let env = sample(env);
    let mut args =
        vec!["report", "--json", "-r", pcap.to_str().unwrap(), "--nccl-env", env.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(!o.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    (common::report_json(&o.stdout), o.status.code())
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(sample("nccl-job.expected.json")).unwrap()).unwrap()
}

fn findings(r: &Value) -> Vec<&Value> {
    r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "nccl_env_mismatch").collect()
}

/// Every run the generator worked out: its exit status, exactly its variables in order
/// with their verdicts and the values that would match, and its findings by severity.
#[test]
fn the_sample_job_gives_the_verdicts_its_generator_worked_out() {
    let e = expected();
    let c = common::count(&sample("nccl-job.pcap"));
    assert_eq!(c.frames, e["counts"]["frames"].as_u64().unwrap());
    let runs = e["nccl"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        let args: Vec<&str> = r["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        let env = r["env"].as_str().unwrap();
        let (rep, code) = report(env, &args);
        let about = format!("{env} {args:?} ({})", r["about"]);
        assert_eq!(code, r["exit"].as_u64().map(|c| c as i32), "{about}");
        let got: Vec<Value> = rep["nccl"]["variables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| serde_json::json!({"name": v["name"], "verdict": v["verdict"], "would_match": v["would_match"]}))
            .collect();
        assert_eq!(Value::Array(got), r["variables"], "{about}: {:#}", rep["nccl"]);
        let f = findings(&rep);
        for sev in ["warning", "info"] {
            let n = f.iter().filter(|x| x["severity"] == sev).count() as u64;
            assert_eq!(n, r["findings"][sev].as_u64().unwrap(), "{about}: {sev}: {f:#?}");
        }
        // The section's counts agree with its entries, and a mismatch has its finding.
        let vars = rep["nccl"]["variables"].as_array().unwrap();
        let count = |v: &str| vars.iter().filter(|x| x["verdict"] == v).count() as u64;
        assert_eq!(rep["nccl"]["mismatched"], count("mismatch"));
        assert_eq!(rep["nccl"]["matched"], count("match"));
        assert_eq!(rep["nccl"]["not_checked"], count("not_checked"));
        assert_eq!(f.len() as u64, count("mismatch"), "{about}");
        for v in vars {
            let verdict = v["verdict"].as_str().unwrap();
            assert!(!v["sets"].as_str().unwrap().is_empty(), "{about}: {v}");
            if verdict == "not_checked" {
                assert!(
                    v["reason"].as_str().is_some_and(|r| !r.is_empty()),
                    "{about}: not checked says why: {v}"
                );
            }
        }
    }
}

/// The mismatching file's findings name the variable, its value, the wire's value and the
/// value that would match, with the frames that show it; none is critical.
#[test]
fn mismatch_findings_name_variable_value_wire_and_the_value_that_would_match() {
    let (r, code) = report("nccl-job.mismatch.env", &[]);
    assert_eq!(code, Some(0), "warnings fail nothing without --fail-on");
    let f = findings(&r);
    assert!(f.iter().all(|x| x["severity"] != "critical"));
    let title = |var: &str| {
        f.iter()
            .map(|x| x["title"].as_str().unwrap())
            .find(|t| t.starts_with(var))
            .unwrap_or_else(|| panic!("no finding for {var}: {f:#?}"))
            .to_string()
    };
    let tc = title("NCCL_IB_TC=96");
    assert!(
        tc.contains("are on DSCP 26") && tc.contains("(not 24") && tc.ends_with("NCCL_IB_TC=104 would match"),
        "{tc}"
    );
    let to = title("NCCL_IB_TIMEOUT=12");
    assert!(
        to.contains("75.0 ms") && to.contains("16.8 ms") && to.ends_with("NCCL_IB_TIMEOUT=14 would match"),
        "{to}"
    );
    let rc = title("NCCL_IB_RETRY_CNT=2");
    assert!(
        rc.contains("resent 3 times over 225.0 ms")
            && rc.ends_with(
                "NCCL_IB_RETRY_CNT=3 or more (at least 3 retries seen; NCCL's default is 7) would match"
            ),
        "{rc}"
    );
    let q = title("NCCL_IB_QPS_PER_CONNECTION=4");
    assert!(
        q.contains("3 of 3 host-pair directions")
            && q.ends_with("NCCL_IB_QPS_PER_CONNECTION=2 (or 1) would match"),
        "{q}"
    );
    let gid = f.iter().find(|x| x["title"].as_str().unwrap().starts_with("NCCL_IB_GID_INDEX=0")).unwrap();
    assert_eq!(gid["severity"], "info", "the GID table is the host's: a heuristic");
    // Evidence: the timeout's is the frame of the resend after the longest gap (frame
    // numbers from 1; the resends are the sample's "retransmit" events).
    let e = expected();
    let resends: Vec<u64> = e["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["what"] == "retransmit")
        .map(|x| x["frame"].as_u64().unwrap())
        .collect();
    let t = f.iter().find(|x| x["title"].as_str().unwrap().starts_with("NCCL_IB_TIMEOUT")).unwrap();
    let ev = t["evidence"][0]["frame"].as_u64().unwrap();
    assert!(resends.iter().any(|fr| fr + 1 == ev), "evidence frame {ev}, resends at {resends:?} (0-based)");
    let rc = f.iter().find(|x| x["title"].as_str().unwrap().starts_with("NCCL_IB_RETRY_CNT")).unwrap();
    assert_eq!(rc["evidence"][0]["frame"].as_u64(), resends.last().map(|fr| fr + 1), "the last resend");
    // The flow's resend figures the checks read (flows[].psn).
    let resent: Vec<&Value> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["psn"]["retransmits"].as_u64() > Some(0))
        .collect();
    assert_eq!(resent.len(), 1, "one flow resends");
    let p = &resent[0]["psn"];
    assert_eq!((p["resend_gaps"].as_u64(), p["retries_max"].as_u64()), (Some(3), Some(3)));
    assert_eq!(p["resend_gap_min_ns"], p["resend_gap_max_ns"]);
    let gap = p["resend_gap_max_ns"].as_i64().unwrap();
    assert!((75_000_000..75_010_000).contains(&gap), "{gap}");
    assert_eq!(p["retries_span_ns"].as_i64(), Some(3 * gap));
    // Counted in the summary.
    for sev in ["warning", "info"] {
        let listed = r["findings"].as_array().unwrap().iter().filter(|x| x["severity"] == sev).count() as u64;
        assert_eq!(r["summary"]["findings"][sev].as_u64(), Some(listed), "{sev}");
    }
    assert_eq!(r["nccl"]["version"], "2.23.4");
    assert_eq!(r["nccl"]["file"].as_str().map(|f| f.ends_with("nccl-job.mismatch.env")), Some(true));
}

/// `--nccl-version` sets the defaults: unset NCCL_IB_TIMEOUT is 14 before 2.14 (67.1 ms, so
/// the 75 ms resends fit) and NCCL_IB_GID_INDEX 0 before 2.21 (RoCEv1 link-local on a
/// typical table, which the RoCEv2/IPv4 frames are not).
#[test]
fn the_version_sets_the_defaults() {
    let (r, _) = report("nccl-job.defaults.env", &["--nccl-version", "2.12.12"]);
    let var =
        |n: &str| r["nccl"]["variables"].as_array().unwrap().iter().find(|v| v["name"] == n).unwrap().clone();
    assert_eq!(r["nccl"]["version"], "2.12.12");
    assert!(
        var("NCCL_IB_TIMEOUT")["sets"].as_str().unwrap().starts_with("ACK timeout 67.1 ms"),
        "{}",
        var("NCCL_IB_TIMEOUT")
    );
    assert_eq!(var("NCCL_IB_TIMEOUT")["verdict"], "match");
    assert_eq!(var("NCCL_IB_GID_INDEX")["verdict"], "mismatch");
    let (r, _) = report("nccl-job.defaults.env", &["--nccl-version", "2.23"]);
    let t = r["nccl"]["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "NCCL_IB_TIMEOUT")
        .unwrap()
        .clone();
    assert!(t["sets"].as_str().unwrap().starts_with("ACK timeout 4.29 s"), "{t}");
    let o = run(&[
        "report",
        "-r",
        sample("nccl-job.pcap").to_str().unwrap(),
        "--nccl-env",
        sample("nccl-job.defaults.env").to_str().unwrap(),
        "--nccl-version",
        "two",
    ]);
    assert_eq!(o.status.code(), Some(2), "a bad version is a usage error");
    let o = run(&["report", "-r", sample("nccl-job.pcap").to_str().unwrap(), "--nccl-version", "2.23"]);
    assert_eq!(o.status.code(), Some(2), "--nccl-version needs --nccl-env");
}

/// The text report has the section, each variable with its verdict.
#[test]
fn the_text_report_has_the_nccl_section() {
    let o = run(&[
        "report",
        "-r",
        sample("nccl-job.pcap").to_str().unwrap(),
        "--nccl-env",
        sample("nccl-job.mismatch.env").to_str().unwrap(),
    ]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("NCCL SETTINGS AGAINST THE WIRE ("), "{t}");
    assert!(t.contains("NCCL 2.23.4): 0 match, 5 mismatch, 0 not checked"), "{t}");
    assert!(t.contains("  NCCL_IB_TC=96") && t.contains("would match: NCCL_IB_TC=104"), "{t}");
}

/// A missing, unreadable or bad environment file is an error before any report (status 1,
/// as a bad counter file), in one line naming the file and the line.
#[test]
fn a_bad_environment_file_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = sample("nccl-job.pcap");
    let cases = [
        (
            "bad.env",
            "NCCL_IB_TC=106\nNCCL_IB_TIMEOUT=long\n",
            "bad.env: line 2: NCCL_IB_TIMEOUT=\"long\" is not a number",
        ),
        ("spaced.env", "NCCL_IB_TC = 106\n", "spaced.env: line 1: `NCCL_IB_TC = 106`: no spaces around `=`"),
        ("yaml.env", "- name: NCCL_IB_TC\n  value: \"106\"\n", "yaml.env: no NCCL_* assignment"),
    ];
    for (name, body, want) in cases {
        let f = dir.path().join(name);
        std::fs::write(&f, body).unwrap();
        let o = run(&["report", "-r", pcap.to_str().unwrap(), "--nccl-env", f.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(o.stdout.is_empty(), "{name}: no report before the error");
        assert!(err.contains(want), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: said once: {err}");
    }
    let o = run(&["report", "-r", pcap.to_str().unwrap(), "--nccl-env", "/nonexistent/job.env"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot read NCCL environment file /nonexistent/job.env")
    );
}

/// A file named nccl.conf is read as NCCL reads it: a quoted value keeps its quotes, so
/// `NCCL_IB_TC="106"` is 0 for NCCL, a mismatch on the sample's DSCP 26 that says why; the
/// same line in an environment dump is 106, a match.
#[test]
fn a_quoted_value_in_nccl_conf_is_read_as_nccl_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let body = "# nccl 2.23.4\nNCCL_IB_TC=\"106\"\n";
    let conf = dir.path().join("nccl.conf");
    let dump = dir.path().join("job.env");
    std::fs::write(&conf, body).unwrap();
    std::fs::write(&dump, body).unwrap();
    let pcap = sample("nccl-job.pcap");
    let tc = |f: &std::path::Path| {
        let o = run(&["report", "--json", "-r", pcap.to_str().unwrap(), "--nccl-env", f.to_str().unwrap()]);
        let r = common::report_json(&o.stdout);
        r["nccl"]["variables"].as_array().unwrap().iter().find(|v| v["name"] == "NCCL_IB_TC").unwrap().clone()
    };
    let c = tc(&conf);
    assert_eq!((c["verdict"].as_str(), c["value"].as_str()), (Some("mismatch"), Some("\"106\"")), "{c}");
    assert_eq!(c["would_match"], "104", "{c}");
    assert!(c["reason"].as_str().is_some_and(|r| r.contains("NCCL's config file keeps quotes")), "{c}");
    let d = tc(&dump);
    assert_eq!((d["verdict"].as_str(), d["value"].as_str()), (Some("match"), Some("106")), "{d}");
}

/// Without --nccl-env there is no `nccl` section and no such finding: every bundled sample
/// and every real capture.
#[test]
fn no_nccl_section_without_the_option() {
    let mut files = common::captures_in(&common::root().join("samples"));
    files.push(sample("nccl-job.pcap"));
    if let Some(dir) = common::real_captures() {
        files.extend(common::captures_in(&dir));
    }
    for p in files {
        let o = run(&["report", "--json", "-r", p.to_str().unwrap()]);
        if o.stdout.is_empty() {
            continue; // a capture the report refuses is the real-captures test's business
        }
        let r = common::report_json(&o.stdout);
        assert!(r.get("nccl").is_none(), "{}", p.display());
        assert!(findings(&r).is_empty(), "{}", p.display());
    }
}

/// The job's own settings against every real capture: no check is a wrong CRITICAL, each
/// not-checked verdict says why, and the section is always there.
#[test]
fn real_captures_give_reasoned_verdicts() {
    let Some(dir) = common::real_captures() else { return };
    for p in common::captures_in(&dir) {
        let (path, env) = (p.to_str().unwrap().to_string(), sample("nccl-job.match.env"));
        let o = run(&["report", "--json", "-r", &path, "--nccl-env", env.to_str().unwrap()]);
        if o.stdout.is_empty() {
            continue;
        }
        let r = common::report_json(&o.stdout);
        let vars = r["nccl"]["variables"].as_array().unwrap_or_else(|| panic!("{path}: no nccl section"));
        for v in vars {
            if v["verdict"] == "not_checked" {
                assert!(v["reason"].as_str().is_some_and(|x| !x.is_empty()), "{path}: {v}");
            }
            if v["verdict"] == "mismatch" {
                // A value that would match, or (hosts that disagree) the hosts that don't follow.
                let reason = v["reason"].as_str().unwrap_or_default();
                assert!(v["would_match"].is_string() || reason.contains("not follow"), "{path}: {v}");
                assert_ne!(v["severity"], "critical", "{path}: {v}");
            }
        }
    }
}

/// The library's check on a report that holds its flows (`rocescope_analyzer::nccl::check`,
/// what `compare` and `export` call) gives the section the streamed `report` gives.
#[test]
fn the_library_check_on_a_whole_report_is_the_commands() {
    use rocescope_analyzer::{nccl, Analyzer, Config};
    let opts = rocescope_decoder::DecodeOptions::default();
    let mut a = Analyzer::new(Config { points: vec!["nccl-job.pcap".into()], ..Config::default() });
    let path = sample("nccl-job.pcap");
    let mut rd = rocescope_capture::CaptureReader::open(&path).unwrap();
    let mut n = 0;
    while let Some(rec) = rd.next_record().unwrap() {
        n = rec.number_after(n);
        let p = rocescope_decoder::decode(rec.link_type, rec.data, &opts);
        a.push_frame(n, &rec, &p, &opts);
    }
    a.finish();
    let mut rep = a.report();
    let env = nccl::parse(&std::fs::read_to_string(sample("nccl-job.mismatch.env")).unwrap()).unwrap();
    let mut check = nccl::check(&env, &rep);
    check.file = Some(sample("nccl-job.mismatch.env").display().to_string());
    let warnings = rep.summary.findings.warning;
    nccl::attach(&mut rep, check);
    assert_eq!(rep.summary.findings.warning, warnings + 4);
    let lib = serde_json::to_value(&rep.nccl).unwrap();
    let (mut cmd, _) = report("nccl-job.mismatch.env", &[]);
    // The command's JSON adds each time's decimal twin (`ts`).
    fn untwin(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("ts");
                m.values_mut().for_each(untwin);
            }
            Value::Array(a) => a.iter_mut().for_each(untwin),
            _ => {}
        }
    }
    untwin(&mut cmd);
    assert_eq!(lib, cmd["nccl"]);
}
