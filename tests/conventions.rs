//! The command line a tcpdump/tshark user expects: completions, man page, -D, -Y, -T fields,
//! -q, -l, -n, -s on files, and errors that say what to do.

mod common;

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn demo() -> String {
    common::root().join("samples/demo.pcap").display().to_string()
}

const COMMANDS: &[&str] =
    &["decode", "capture", "interfaces", "report", "tui", "export", "completions", "man"];

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", err(&o));
        let s = out(&o);
        for c in COMMANDS {
            assert!(s.contains(c), "{shell} completion lacks {c}");
        }
        assert!(s.contains("expect-dscp") && s.contains("display-filter"), "{shell}: options");
    }
    // The bash script is valid bash and completes the subcommands.
    let script = out(&run(&["completions", "bash"]));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rocescope.bash");
    std::fs::write(&path, &script).unwrap();
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && COMP_WORDS=(rocescope rep) COMP_CWORD=1 && _rocescope rocescope rep rocescope && echo \"${{COMPREPLY[@]}}\"",
            path.display()
        ))
        .output()
        .expect("bash");
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "report");
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("possible values"), "{}", err(&o));
}

#[test]
fn man_pages_are_generated_from_the_command_line() {
    let o = run(&["man"]);
    assert!(o.status.success());
    let page = out(&o);
    assert!(page.contains(".TH rocescope 1"), "{page}");
    for c in COMMANDS {
        assert!(page.contains(c), "the man page lists {c}");
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("man1");
    let o = run(&["man", "--dir", target.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    for name in ["rocescope.1", "rocescope-decode.1", "rocescope-report.1", "rocescope-capture.1"] {
        let p = std::fs::read_to_string(target.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(p.starts_with(".ie") || p.contains(".TH"), "{name}");
    }
    let decode = std::fs::read_to_string(target.join("rocescope-decode.1")).unwrap();
    assert!(decode.contains("display\\-filter"), "decode's page has its options");
    // Rendered by man(1) where it is installed.
    if Command::new("man").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let o = Command::new("man")
            .arg("-l")
            .arg(target.join("rocescope-decode.1"))
            .env("MANPAGER", "cat")
            .output();
        if let Ok(o) = o {
            assert!(out(&o).contains("display-filter") || !o.status.success(), "{}", out(&o));
        }
    }
}

#[test]
fn list_interfaces_like_tcpdump_d() {
    let o = run(&["-D"]);
    assert!(o.status.success(), "{}", err(&o));
    let s = out(&o);
    assert!(s.lines().next().is_some_and(|l| l.starts_with("1.")), "{s}");
    assert!(s.contains("lo"), "{s}");
    // Alone: -D with anything else is a usage error.
    assert_eq!(run(&["-D", "-r", &demo()]).status.code(), Some(2));
}

#[test]
fn display_filter_selects_the_frames_that_match() {
    let all = common::decode_lines(&run(&["decode", "--json", "-r", &demo()]).stdout);
    let naks = all.iter().filter(|f| f["aeth"]["kind"] == "nak").count();
    let qp32 =
        all.iter().filter(|f| f["bth"]["dqpn"] == 0x32 && f["bth"]["psn"].as_u64() > Some(103)).count();
    let pfc = all.iter().filter(|f| f.get("pfc").is_some()).count();
    assert!(naks > 0 && qp32 > 0 && pfc > 0);
    let o = run(&["decode", "--json", "-Y", "nak", "-r", &demo()]);
    assert_eq!(common::decode_lines(&o.stdout).len(), naks);
    let o = run(&["decode", "-Y", "qp=0x32 and psn>103", "-r", &demo()]);
    assert_eq!(out(&o).lines().count(), qp32);
    // Frame numbers stay those of the capture.
    let o = run(&["decode", "--json", "-Y", "pfc", "-c", "100", "-r", &demo()]);
    let frames: Vec<u64> =
        common::decode_lines(&o.stdout).iter().map(|f| f["frame"].as_u64().unwrap()).collect();
    let want: Vec<u64> = all
        .iter()
        .filter(|f| f.get("pfc").is_some() && f["frame"].as_u64() <= Some(100))
        .map(|f| f["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(frames, want);
    // -q: only the count.
    let o = run(&["decode", "-q", "-Y", "pfc", "-r", &demo()]);
    assert!(o.status.success());
    assert_eq!(out(&o), "");
    assert!(err(&o).contains(&format!("{} frames read, {pfc} matched", all.len())), "{}", err(&o));
    // A connection-only word is refused with the packet vocabulary.
    let o = run(&["decode", "-Y", "gaps>0", "-r", &demo()]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
    assert!(err(&o).contains("display filter") && err(&o).contains("psn"), "{}", err(&o));
    // A Wireshark name rocescope does not know is a usage error that lists the ones it does;
    // `-e` says the same.
    let o = run(&["decode", "-Y", "tcp.port == 80", "-r", &demo()]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
    for name in ["unknown field \"tcp.port\"", "eth.addr", "ip.ttl", "ip.id", "infiniband.bth.a", "psn"] {
        assert!(err(&o).contains(name), "{name} missing: {}", err(&o));
    }
    let o = run(&["decode", "-T", "fields", "-e", "tcp.port", "-r", &demo()]);
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", err(&o));
    assert!(
        err(&o).contains("Wireshark's names: frame.number") && err(&o).contains("eth.addr"),
        "{}",
        err(&o)
    );
    // What `-e` prints under a name, `-Y` selects by: the PFC frames' source MAC.
    let o = run(&[
        "decode",
        "-Y",
        "eth.dst == 01:80:c2:00:00:01 && pfc",
        "-T",
        "fields",
        "-e",
        "eth.addr",
        "-r",
        &demo(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), pfc);
    assert!(lines.iter().all(|l| l.starts_with("01:80:c2:00:00:01,")), "{lines:?}");
}

#[test]
fn fields_output_like_tshark() {
    let all = common::decode_lines(&run(&["decode", "--json", "-r", &demo()]).stdout);
    let o = run(&[
        "decode",
        "-T",
        "fields",
        "-e",
        "frame",
        "-e",
        "ts",
        "-e",
        "ip.src",
        "-e",
        "bth.psn",
        "-e",
        "vlan.pcp",
        "-E",
        "header=y",
        "-r",
        &demo(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("frame\tts\tip.src\tbth.psn\tvlan.pcp"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), all.len());
    for (row, f) in rows.iter().zip(&all) {
        assert_eq!(row.len(), 5);
        assert_eq!(row[0], f["frame"].to_string());
        assert_eq!(row[1], f["ts"].as_str().unwrap());
        assert_eq!(row[2], f["ip"]["src"].as_str().unwrap_or(""));
        assert_eq!(row[3], f["bth"]["psn"].as_u64().map(|p| p.to_string()).unwrap_or_default());
        let pcps: Vec<String> = f["vlan"]
            .as_array()
            .map(|v| v.iter().map(|t| t["pcp"].to_string()).collect())
            .unwrap_or_default();
        assert_eq!(row[4], pcps.join(","));
    }
    // The filter's name and Wireshark's are the same field (docs/decode.md).
    let psn = |name: &str| out(&run(&["decode", "-T", "fields", "-e", name, "-r", &demo()]));
    assert_eq!(psn("psn"), psn("bth.psn"));
    assert_eq!(psn("infiniband.bth.psn"), psn("bth.psn"));
    let o = run(&["decode", "-T", "fields", "-e", "seq", "-r", &demo()]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
    assert!(err(&o).contains("bth.psn"), "lists the names: {}", err(&o));
    let o = run(&["decode", "-T", "fields", "-r", &demo()]);
    assert!(err(&o).contains("-e FIELD"), "{}", err(&o));
    let o = run(&["decode", "-e", "frame", "-r", &demo()]);
    assert!(err(&o).contains("-T fields"), "{}", err(&o));
    assert_eq!(o.status.code(), Some(2));
    // -T ndjson is --json; -l and -n change nothing in what is printed. -T json is one
    // array of the same objects, as tshark's -T json is an array.
    let a = run(&["decode", "-T", "ndjson", "-r", &demo()]);
    let b = run(&["decode", "--json", "-l", "-n", "-r", &demo()]);
    assert_eq!(a.stdout, b.stdout);
    let arr: serde_json::Value =
        serde_json::from_slice(&run(&["decode", "-T", "json", "-r", &demo()]).stdout)
            .expect("-T json is one JSON document");
    assert_eq!(arr.as_array().map(Vec::as_slice), Some(common::decode_lines(&b.stdout).as_slice()));
    let none = run(&["decode", "-T", "json", "-Y", "qp=0xabcdef", "-r", &demo()]);
    assert_eq!(out(&none), "[]\n");
    assert!(run(&["decode", "-T", "json", "--json", "-r", &demo()]).status.code() == Some(2));
}

#[test]
fn snap_length_applies_to_files() {
    let whole = common::decode_lines(&run(&["decode", "--json", "-r", &demo()]).stdout);
    let cut = common::decode_lines(&run(&["decode", "--json", "-s", "128", "-r", &demo()]).stdout);
    assert_eq!(whole.len(), cut.len());
    let mut longer = 0;
    for (w, c) in whole.iter().zip(&cut) {
        let caplen = w["caplen"].as_u64().unwrap();
        assert_eq!(c["caplen"].as_u64().unwrap(), caplen.min(128));
        assert_eq!(c["len"], w["len"], "the wire length is kept");
        if caplen > 128 && w.get("bth").is_some() && w["icrc"]["status"] == "valid" {
            longer += 1;
            assert_eq!(c["icrc"]["status"], "truncated", "frame {}", w["frame"]);
            assert_eq!(c["bth"], w["bth"], "headers still decode");
        }
    }
    assert!(longer > 50, "{longer}");
    // The report sees a header-only capture: the same flows and PSNs, no bad ICRC checks.
    let full = common::report_json(&run(&["report", "--json", "-r", &demo()]).stdout);
    let snap = common::report_json(&run(&["report", "--json", "-s", "128", "-r", &demo()]).stdout);
    assert_eq!(snap["summary"]["flows"], full["summary"]["flows"]);
    assert_eq!(snap["summary"]["roce"], full["summary"]["roce"]);
    assert!(snap["summary"]["icrc_truncated"].as_u64() > full["summary"]["icrc_truncated"].as_u64());
    // capture -r -s writes the cut frames.
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("cut.pcapng");
    let o = run(&["capture", "-q", "-r", &demo(), "-s", "96", "-w", w.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let copy = common::decode_lines(&run(&["decode", "--json", "-r", w.to_str().unwrap()]).stdout);
    assert_eq!(copy.len(), whole.len());
    assert!(copy.iter().all(|f| f["caplen"].as_u64().unwrap() <= 96));
    // The files say the snap length they were cut to (issue 41: the input's was kept): the
    // classic header's snaplen field (offset 16) and the pcapng IDB's (block offset 12).
    let pcap = dir.path().join("cut.pcap");
    let o = run(&["decode", "-s", "128", "-r", &demo(), "-w", pcap.to_str().unwrap(), "--pcap"]);
    assert!(o.status.success(), "{}", err(&o));
    let bytes = std::fs::read(&pcap).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[16..20].try_into().unwrap()), 128);
    let ng = std::fs::read(&w).unwrap();
    let shb_len = u32::from_le_bytes(ng[4..8].try_into().unwrap()) as usize;
    assert_eq!(u32::from_le_bytes(ng[shb_len..shb_len + 4].try_into().unwrap()), 1, "an IDB follows the SHB");
    assert_eq!(u32::from_le_bytes(ng[shb_len + 12..shb_len + 16].try_into().unwrap()), 96);
    // Without -s, the input's snap length stays.
    let o = run(&["decode", "-r", &demo(), "-w", pcap.to_str().unwrap(), "--pcap"]);
    assert!(o.status.success(), "{}", err(&o));
    let demo_snap = u32::from_le_bytes(std::fs::read(demo()).unwrap()[16..20].try_into().unwrap());
    assert_eq!(u32::from_le_bytes(std::fs::read(&pcap).unwrap()[16..20].try_into().unwrap()), demo_snap);
    // -s 0 is whole frames, as in tcpdump and tshark.
    let zero = common::decode_lines(&run(&["decode", "--json", "-s", "0", "-r", &demo()]).stdout);
    assert_eq!(zero, whole);
    assert_eq!(run(&["decode", "-s", "x", "-r", &demo()]).status.code(), Some(2));
    // A snap length that cuts into the extended headers: the frames are cut, not malformed,
    // and what decoded (the BTH) is still analysed.
    let o = run(&["decode", "-s", "60", "-c", "1", "-r", &demo()]);
    assert!(out(&o).contains("[header cut by the capture: RETH at offset 54"), "{}", out(&o));
    let tiny = common::report_json(&run(&["report", "--json", "-s", "60", "-r", &demo()]).stdout);
    assert!(
        tiny["summary"]["malformed"].as_u64() <= full["summary"]["malformed"].as_u64(),
        "{}",
        tiny["summary"]
    );
    let gaps = |r: &serde_json::Value| -> u64 {
        r["flows"].as_array().unwrap().iter().map(|f| f["psn"]["gaps"].as_u64().unwrap()).sum()
    };
    assert_eq!(gaps(&tiny), gaps(&full), "the PSN analysis needs only the BTH");
}

#[test]
fn report_quiet_says_it_with_the_exit_status() {
    let o = run(&["report", "-q", "-r", &demo(), "--expect-dscp", "26"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(out(&o), "");
    let rc = common::root().join("samples/rc-normal.pcap");
    let o = run(&["report", "-q", "-r", rc.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out(&o), "");
}

#[test]
fn errors_say_what_to_do_once() {
    let o = run(&["decode", "-r", "/nonexistent/roce.pcap"]);
    assert_eq!(o.status.code(), Some(1));
    let e = err(&o);
    assert_eq!(e.matches("No such file or directory").count(), 1, "{e}");
    assert!(e.contains("/nonexistent/roce.pcap"), "{e}");
    let o = run(&["capture", "-w", "x.pcapng"]);
    assert!(err(&o).contains("-r FILE") && err(&o).contains("-i IFACE"), "{}", err(&o));
    for cmd in ["decode", "report", "tui", "export"] {
        let o = run(&[cmd]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let e = err(&o);
        assert!(e.contains("-r FILE") && e.contains("-i IFACE"), "{cmd}: {e}");
        assert!(e.contains(&format!("rocescope {cmd}")), "{cmd}: usage of the command: {e}");
    }
    // Bare `rocescope`: the help, not an error about --read.
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).contains("Commands:"), "{}", out(&o));
    assert!(!err(&o).contains("--read"));
}

/// On a terminal, decode prints each frame as it arrives (as tshark and tcpdump do), so
/// `tcpdump -U -w - | rocescope decode -r -` shows packets live; and capture refuses to
/// write a binary capture onto it.
#[test]
fn a_terminal_gets_each_frame_as_it_comes() {
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let rnr = common::root().join("samples/rnr.pcap");
    // The pcap header and the first records (354 bytes), then the pipe stays open 30 s.
    let cmd = format!("sh -c '(head -c 354 {}; sleep 30) | {bin} decode -r -'", rnr.display());
    let Some(t) = common::Tmux::start(&cmd) else { return };
    let screen = t.wait_for("RC Send Only");
    assert!(screen.contains("    1 "), "{screen}");
    let cmd = format!("sh -c '{bin} capture -r {} -w -; sleep 30'", rnr.display());
    let Some(t) = common::Tmux::start(&cmd) else { return };
    t.wait_for("writes a binary capture to standard output, which is a terminal");
}

#[test]
fn tcpdump_habits_a_bare_file_version_and_no_roce() {
    // A file given without -r is the input, for decode, report and the UI's report.
    let with_r = run(&["report", "--json", "-r", &demo()]);
    let bare = run(&["report", "--json", &demo()]);
    assert_eq!(bare.status.code(), with_r.status.code());
    assert_eq!(common::report_json(&bare.stdout)["summary"], common::report_json(&with_r.stdout)["summary"]);
    assert_eq!(out(&run(&["decode", &demo(), "-c", "3"])), out(&run(&["decode", "-r", &demo(), "-c", "3"])));
    assert_eq!(out(&run(&[&demo()])), out(&run(&["-r", &demo()])), "not a terminal: the report");
    // At the top level, a word that is neither a file nor a path is a mistyped command.
    let o = run(&["raport", "-r", &demo()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("unrecognized subcommand 'raport'"), "{}", err(&o));
    // With an interface, a word after the options is not a file: what it probably meant.
    let o = run(&["decode", "-i", "lo", "udp", "port", "4791"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("a capture filter goes after -f"), "{}", err(&o));
    // --version only: -V is decode's verbose.
    let v = run(&["--version"]);
    assert!(v.status.success() && out(&v).starts_with("rocescope "), "{}", out(&v));
    assert_eq!(run(&["-V"]).status.code(), Some(2));
    // A capture with no RoCE is not "clean": nothing was checked.
    let none = common::root().join("samples/qos/no-roce.pcap");
    let text = out(&run(&["report", "-r", none.to_str().unwrap()]));
    assert!(text.contains("no RoCE seen: nothing to audit"), "{text}");
    assert!(!text.contains("clean"), "{text}");
}

#[test]
fn write_what_you_filtered_as_tshark_does() {
    let dir = tempfile::tempdir().unwrap();
    let filter = "qp=0x31 or pfc or nak";
    // What decode -Y shows, without the frame number (the written file numbers from 1).
    let strip = |lines: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        lines
            .into_iter()
            .map(|mut v| {
                v.as_object_mut().map(|o| o.remove("frame"));
                v
            })
            .collect()
    };
    let shown = strip(common::decode_lines(&run(&["decode", "--json", "-r", &demo(), "-Y", filter]).stdout));
    assert!(shown.len() > 10, "{}", shown.len());
    for (cmd, ext) in [("decode", "pcapng"), ("capture", "pcapng"), ("decode", "pcap")] {
        let w = dir.path().join(format!("{cmd}.{ext}"));
        let input = demo();
        let mut args = vec![cmd, "-r", &input, "-Y", filter, "-w", w.to_str().unwrap()];
        if ext == "pcap" {
            args.push("--pcap");
        }
        let o = run(&args);
        assert!(o.status.success(), "{cmd}: {}", err(&o));
        assert_eq!(out(&o), "", "{cmd} -w prints no frame");
        let back = strip(common::decode_lines(&run(&["decode", "--json", "-r", w.to_str().unwrap()]).stdout));
        assert_eq!(back, shown, "{cmd} -w {ext}");
    }
    // `frame` and `time` terms number and time the frames as decode does.
    let w = dir.path().join("first.pcapng");
    let o = run(&[
        "capture",
        "-r",
        &demo(),
        "-Y",
        "frame.number <= 10 and frame.time_relative < 1",
        "-w",
        w.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(common::decode_lines(&run(&["decode", "--json", "-r", w.to_str().unwrap()]).stdout).len(), 10);
    // The closing line says what was kept.
    let w = dir.path().join("again.pcapng");
    let o = run(&["decode", "-r", &demo(), "-Y", filter, "-w", w.to_str().unwrap()]);
    assert!(
        err(&o).contains(&format!("{} of 182 frames matched the display filter", shown.len())),
        "{}",
        err(&o)
    );
    // A filter that does not parse is a usage error before anything is written.
    let bad = dir.path().join("bad.pcapng");
    for cmd in ["decode", "capture"] {
        let o = run(&[cmd, "-r", &demo(), "-Y", "((", "-w", bad.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", err(&o));
        assert!(!bad.exists(), "{cmd} wrote a file");
    }
    // The output may not be the input.
    let o = run(&["decode", "-r", &demo(), "-w", &demo()]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
}
