//! Inputs that are not regular files, Parquet sides and sides laid out in directories
//! (issue 40, third round, the I/O items): a compare side given as a pipe, a FIFO or
//! `<(...)` is read whole (its sniff consumes nothing); `report --threads N` reads one once
//! and reports what one thread reports; a signal ends a wait in open(2) or read(2) on a FIFO
//! with the documented status; a FIFO named like a Parquet table is refused at once, a
//! damaged table is an error naming it (never a panic), and a Parquet side is read in
//! batches; points under `before/hostN/` and `after/hostN/` pair by their path below each
//! side's directory.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples").join(name)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mkfifo(path: &Path) {
    assert!(
        Command::new("mkfifo").arg(path).status().expect("mkfifo").success(),
        "mkfifo {}",
        path.display()
    );
}

/// Write `bytes` into the FIFO `path` on a thread (opening it waits for the reader).
fn feed(path: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&path) {
            // The reader may stop early (an error): a broken pipe is not the test's failure.
            let _ = f.write_all(&bytes);
        }
    })
}

/// Wait for `child` at most `secs` seconds, its output read meanwhile (a report larger
/// than a pipe's buffer would otherwise wait for its reader); a child still running then is
/// killed and the test fails (the bug this guards against left one waiting for 20 minutes).
fn wait_at_most(mut child: Child, secs: u64, what: &str) -> (Output, Duration) {
    use std::io::Read;
    let start = Instant::now();
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = start.elapsed();
    let output = Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() };
    (output, took)
}

/// Run `bash -c script` with `$R` the binary and `$S` `sample`.
fn bash(script: &str, sample: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("bash");
    c.args(["-c", script]).env("R", env!("CARGO_BIN_EXE_rocescope")).env("S", sample);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("bash")
}

/// A compare side given as a FIFO or a shell's `<(...)` is read whole, capture or report
/// document: the same file against itself is no change. The sniff for a report document
/// used to read the first 64 bytes out of the pipe ("not a pcap (starts with 25 3a 0a 00)",
/// status 1).
#[test]
fn a_compare_side_given_as_a_pipe_or_fifo_is_read_whole() {
    let demo = sample("demo.pcap");
    let bytes = std::fs::read(&demo).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = bin().args(["report", "--json", "-r"]).arg(&demo).output().unwrap();
    assert!(json.status.success());
    let doc = dir.path().join("demo.json");
    std::fs::write(&doc, &json.stdout).unwrap();
    for (what, content, kind) in
        [("capture", bytes.clone(), "capture"), ("report", json.stdout.clone(), "report_json")]
    {
        for fifo_side in [0, 1] {
            let fifo = dir.path().join(format!("{what}-{fifo_side}.fifo"));
            mkfifo(&fifo);
            let writer = feed(&fifo, content.clone());
            let other = if what == "capture" { &demo } else { &doc };
            let mut cmd = bin();
            cmd.args(["compare", "--json"]);
            if fifo_side == 0 {
                cmd.arg(&fifo).arg(other);
            } else {
                cmd.arg(other).arg(&fifo);
            }
            let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            let (o, _) = wait_at_most(child, 60, "compare with a FIFO side");
            writer.join().unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{what} through a FIFO on side {fifo_side}: {}",
                text(&o.stderr)
            );
            let d = common::compare_json(&o.stdout);
            let side = if fifo_side == 0 { "before" } else { "after" };
            assert_eq!(d[side]["kind"], kind, "{what}");
            assert_eq!(d["verdicts"].as_array().map(Vec::len), Some(0), "{what}");
        }
    }
    // Process substitution, on either side, and standard input against it.
    for script in [
        r#""$R" compare --json <(cat "$S") "$S""#,
        r#""$R" compare --json "$S" <(cat "$S")"#,
        r#"cat "$S" | "$R" compare --json - <(cat "$S")"#,
        r#""$R" report --json -r "$S" | "$R" compare --json - "$S""#,
    ] {
        let o = bash(script, &demo, &[]);
        assert_eq!(o.status.code(), Some(0), "{script}: {}", text(&o.stderr));
        let d = common::compare_json(&o.stdout);
        assert_eq!(d["gate"]["exit"], 0, "{script}");
        assert!(d["points"].as_array().is_some_and(|p| p.len() == 1), "{script}");
    }
    // --split-at reads its capture twice: a pipe is a usage error, said as such.
    let o = bash(r#""$R" compare --split-at +10ms <(cat "$S")"#, &demo, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("not a pipe or FIFO"), "{}", text(&o.stderr));
}

/// Two threads on a pipe where the two stages cannot run (the RoCE port set to sFlow's, whose
/// datagrams are read: no common frame) read it on one thread, as before them: the second of
/// two shards reopened standard input ("is empty", status 1) and waited on a FIFO.
#[test]
fn two_threads_on_a_pipe_without_two_stages_read_it_once() {
    let path = sample("mirror-duplicates.pcap");
    for input in [r#"-r - < "$S""#, r#"-r <(cat "$S")"#] {
        let script = format!(r#""$R" report --json --threads "$T" --roce-port 6343 {input}"#);
        let one = bash(&script, &path, &[("T", "1")]);
        assert!(one.status.success(), "{input}: {}", text(&one.stderr));
        let two = bash(&script, &path, &[("T", "2")]);
        assert_eq!(two.status.code(), Some(0), "{input}: {}", text(&two.stderr));
        assert!(one.stdout == two.stdout, "{input}: two threads differ");
    }
}

/// `report --threads 2` and `3` on a FIFO and on a pipe read it once and print exactly the
/// one-thread report (text and `--json`), whether the divided reading is wanted or not.
/// Every shard used to reopen the input: a `<(...)` gave each shard the bytes the others
/// had not read ("not a pcap"), a FIFO a shard waiting in open(2).
#[test]
fn report_threads_on_a_pipe_or_fifo_give_the_one_thread_report() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["demo.pcap", "incast.pcap", "pfc-storm.pcap"] {
        let path = sample(name);
        let bytes = std::fs::read(&path).unwrap();
        for json in [false, true] {
            let fmt: &[&str] = if json { &["--json"] } else { &[] };
            // Through a FIFO, the same path each time.
            let fifo = dir.path().join(format!("{name}.{json}.fifo"));
            mkfifo(&fifo);
            let through_fifo = |threads: &str, divided: &str| {
                let writer = feed(&fifo, bytes.clone());
                let child = bin()
                    .args(["report", "--threads", threads, "-r"])
                    .arg(&fifo)
                    .args(fmt)
                    .env("ROCESCOPE_DIVIDED", divided)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                let (o, _) = wait_at_most(child, 120, "report on a FIFO");
                writer.join().unwrap();
                o
            };
            let one = through_fifo("1", "0");
            assert!(one.status.success(), "{name}: {}", text(&one.stderr));
            // Through a pipe: `<(...)`, the same descriptor each time.
            let script = format!(r#""$R" report --threads "$T" -r <(cat "$S") {}"#, fmt.join(" "));
            let one_pipe = bash(&script, &path, &[("T", "1"), ("ROCESCOPE_DIVIDED", "0")]);
            assert!(one_pipe.status.success(), "{name}: {}", text(&one_pipe.stderr));
            for threads in ["2", "3"] {
                for divided in ["0", "1"] {
                    let o = through_fifo(threads, divided);
                    assert_eq!(
                        o.status.code(),
                        one.status.code(),
                        "{name} FIFO --threads {threads}: {}",
                        text(&o.stderr)
                    );
                    assert!(
                        o.stdout == one.stdout,
                        "{name} FIFO --threads {threads} (divided {divided}, json {json}) differs"
                    );
                    let o = bash(&script, &path, &[("T", threads), ("ROCESCOPE_DIVIDED", divided)]);
                    assert_eq!(
                        o.status.code(),
                        one_pipe.status.code(),
                        "{name} pipe --threads {threads}: {}",
                        text(&o.stderr)
                    );
                    assert!(
                        o.stdout == one_pipe.stdout,
                        "{name} pipe --threads {threads} (divided {divided}, json {json}) differs"
                    );
                }
            }
        }
    }
}

/// SIGTERM while a FIFO has no writer (every command waits in open(2)), or while its writer
/// has written part of a capture and stalls (read(2)), ends the run promptly with status 143:
/// compare saying it gives no verdict, report writing the partial report. The handlers
/// restart an interrupted call: compare once waited in open(2) through `timeout`'s SIGTERM for
/// 20 minutes.
#[test]
fn a_signal_ends_a_wait_on_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let demo = sample("demo.pcap");
    let demo_s = demo.display().to_string();
    let fifo = dir.path().join("in.fifo");
    mkfifo(&fifo);
    let f = fifo.display().to_string();
    let term = |child: &Child| {
        std::thread::sleep(Duration::from_millis(300));
        assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    };
    let commands: Vec<Vec<&str>> = vec![
        vec!["compare", &f, &demo_s],
        vec!["compare", &demo_s, &f],
        vec!["compare", "--before", &demo_s, &f, "--after", &demo_s, &demo_s],
        vec!["report", "-r", &f],
        vec!["report", "--threads", "2", "-r", &f],
        vec!["decode", "-r", &f],
    ];
    // No writer: open(2) waits.
    for args in &commands {
        let child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        term(&child);
        let (o, took) = wait_at_most(child, 10, &args.join(" "));
        assert_eq!(o.status.code(), Some(143), "{args:?}: {}", text(&o.stderr));
        assert!(took < Duration::from_secs(5), "{args:?} took {took:?} after SIGTERM");
    }
    // A writer that stalls after half the capture: read(2) waits.
    let bytes = std::fs::read(&demo).unwrap();
    let half = bytes[..bytes.len() / 2].to_vec();
    for args in [&commands[0], &commands[3], &commands[4]] {
        let path = fifo.clone();
        let part = half.clone();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let _ = f.write_all(&part);
            // Held open, writing nothing, until the test is done.
            let _ = rx.recv();
        });
        let child = bin().args(args.iter()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        term(&child);
        let (o, took) = wait_at_most(child, 10, &args.join(" "));
        let _ = tx.send(());
        writer.join().unwrap();
        assert_eq!(o.status.code(), Some(143), "{args:?}: {}", text(&o.stderr));
        assert!(took < Duration::from_secs(5), "{args:?} took {took:?} after SIGTERM");
        if args[0] == "compare" {
            assert!(text(&o.stderr).contains("interrupted by SIGTERM: no verdict"), "{}", text(&o.stderr));
        } else {
            let out = text(&o.stdout);
            assert!(out.starts_with("INTERRUPTED by SIGTERM after "), "{args:?}: {out}");
            // Cut by the signal, not damaged: no input error.
            assert!(!out.contains("cut short") && !text(&o.stderr).contains("cut short"), "{out}");
        }
    }
}

/// A `report --parquet` directory of `demo.pcap` in `dir`, and its tables' paths.
fn demo_tables(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let pq = dir.join("demo.parquet");
    let o = bin()
        .args(["report", "-q", "-r"])
        .arg(sample("demo.pcap"))
        .arg("--parquet")
        .arg(&pq)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let find = |prefix: &str| {
        std::fs::read_dir(&pq)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
            .unwrap()
    };
    let (flows, packets) = (find("flows-"), find("packets-"));
    (pq, flows, packets)
}

/// A FIFO in a table's place is refused at once, naming it (it was opened, and compare
/// waited for a writer for ever).
#[test]
fn a_fifo_named_like_a_parquet_table_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (pq, flows, packets) = demo_tables(dir.path());
    for table in [&flows, &packets] {
        let saved = std::fs::read(table).unwrap();
        std::fs::remove_file(table).unwrap();
        mkfifo(table);
        let child = bin()
            .args(["compare"])
            .arg(&pq)
            .arg(sample("demo.pcap"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (o, took) = wait_at_most(child, 10, "compare with a FIFO table");
        let err = text(&o.stderr);
        let name = table.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("BEFORE") && err.contains(&name) && err.contains("not a regular file"), "{err}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        std::fs::remove_file(table).unwrap();
        std::fs::write(table, saved).unwrap();
    }
}

/// Where each column chunk's first data page starts in the table at `path`.
fn data_pages(path: &Path) -> Vec<usize> {
    use parquet::file::reader::FileReader;
    let r = parquet::file::serialized_reader::SerializedFileReader::new(std::fs::File::open(path).unwrap())
        .unwrap();
    let md = r.metadata();
    (0..md.num_row_groups())
        .flat_map(|g| {
            let rg = md.row_group(g);
            (0..rg.num_columns()).map(|c| rg.column(c).data_page_offset() as usize).collect::<Vec<_>>()
        })
        .collect()
}

/// A byte of a table changed: never a panic (status 101), and a side that cannot be read is
/// status 1 with an error naming the side and the table. The damages: some just past a
/// column chunk's first page header (a level run header) that make the Parquet library
/// panic (found by reading the damaged tables in this process), and a stride across each
/// table. One such damage to a flows table ended compare with status 101 (18 of 20 targeted
/// damages did).
#[test]
fn a_damaged_parquet_side_is_an_error_naming_it_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (pq, flows, packets) = demo_tables(dir.path());
    let (good_flows, good_packets) = (std::fs::read(&flows).unwrap(), std::fs::read(&packets).unwrap());
    let cfg = rocescope_analyzer::Config::default();
    let mut caught = 0;
    for (table, good) in [(&flows, &good_flows), (&packets, &good_packets)] {
        let name = table.file_name().unwrap().to_string_lossy().into_owned();
        let damaged = |at: usize| {
            let mut bad = good.clone();
            bad[at] ^= 0xff;
            bad
        };
        // Damages the library panics on (caught, in this process, as errors).
        let gives_up = |at: usize| {
            let (f, p) = if table == &flows {
                (damaged(at), good_packets.clone())
            } else {
                (good_flows.clone(), damaged(at))
            };
            rocescope_output::parquet_read::facts_from_bytes(f, p, &cfg)
                .is_err_and(|e| format!("{e:#}").contains("the Parquet reader gave up on it"))
        };
        let mut offsets: Vec<usize> = data_pages(table)
            .into_iter()
            .flat_map(|p| p + 19..p + 36)
            .filter(|at| *at < good.len())
            .filter(|at| gives_up(*at))
            .take(3)
            .collect();
        assert!(!offsets.is_empty(), "{name}: no damage past a page header made the Parquet library panic");
        offsets.extend((0..good.len()).step_by(good.len() / 15 + 1));
        for at in offsets {
            std::fs::write(table, damaged(at)).unwrap();
            let o = bin().arg("compare").arg(&pq).arg(sample("demo.pcap")).output().unwrap();
            let err = text(&o.stderr);
            assert_ne!(o.status.code(), Some(101), "{name} byte {at}: {err}");
            assert!(!err.contains("panicked"), "{name} byte {at}: {err}");
            if o.status.code() == Some(1) {
                assert!(err.contains("BEFORE") && err.contains(&name), "{name} byte {at}: {err}");
            }
            caught += usize::from(err.contains("the Parquet reader gave up on it"));
        }
        std::fs::write(table, good).unwrap();
    }
    assert!(caught >= 2, "the damages the library panics on were not said as damage");
}

/// Peak resident memory of `rocescope args...` in kB, from `getrusage(RUSAGE_CHILDREN)` of a
/// Python parent that runs it alone; `None` without python3.
fn peak_kb(args: &[&std::ffi::OsStr]) -> Option<(u64, i32)> {
    let o = Command::new("python3")
        .arg("-c")
        .arg(
            "import resource, subprocess, sys\n\
             r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n\
             print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)",
        )
        .arg(env!("CARGO_BIN_EXE_rocescope"))
        .args(args)
        .output()
        .ok()?;
    let out = text(&o.stdout);
    let mut it = out.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// A Parquet side is read batch by batch: comparing the tables of 150,000 packets against
/// their capture takes about what comparing the capture with itself does. Read whole, the
/// tables took about 350 bytes a packet (176 MB at 500,000 packets, 352 MB at 1 M).
#[test]
fn a_parquet_side_is_read_in_batches() {
    if Command::new("python3").arg("--version").output().is_err() {
        common::skip("python3 is not installed: the Parquet side's memory was not measured");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("many.pcap");
    // The frames of a sample, again and again: 150,000 packets.
    let mut frames = Vec::new();
    let mut r = rocescope_capture::CaptureReader::open(&sample("demo.pcap")).unwrap();
    while let Some(rec) = r.next_record().unwrap() {
        frames.push(rec.data.to_vec());
    }
    common::repeated_capture(&cap, &frames, 150_000);
    let pq = dir.path().join("many.parquet");
    let o = bin()
        .args(["report", "-q", "--threads", "1", "-r"])
        .arg(&cap)
        .arg("--parquet")
        .arg(&pq)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let Some((capture, st)) = peak_kb(&["compare".as_ref(), "-q".as_ref(), cap.as_os_str(), cap.as_os_str()])
    else {
        common::skip("python3 could not measure the peak memory");
        return;
    };
    assert_eq!(st, 0);
    let (parquet, st) =
        peak_kb(&["compare".as_ref(), "-q".as_ref(), pq.as_os_str(), cap.as_os_str()]).unwrap();
    assert!(st == 0 || st == 4, "status {st}");
    // Read whole, the tables alone took about 50 MB more.
    assert!(
        parquet < capture + 25_000,
        "a Parquet side of 150,000 packets peaked at {parquet} kB, the capture side at {capture} kB"
    );
}

/// Identical captures laid out as `before/hostN/roce.pcap` and `after/hostN/roce.pcap` pair
/// their points by the path below each side's directory: no change, status 0, and the text
/// and JSON say how they were paired. Named by their paths, they never paired (4 WARNINGs).
#[test]
fn sides_laid_out_in_directories_pair_by_the_path_below_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut sides: [Vec<PathBuf>; 2] = [Vec::new(), Vec::new()];
    for (i, side) in ["before", "after"].iter().enumerate() {
        for (host, name) in [("host1", "two-points-sender.pcap"), ("host2", "two-points-receiver.pcap")] {
            let d = dir.path().join(side).join(host);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::copy(sample(name), d.join("roce.pcap")).unwrap();
            sides[i].push(d.join("roce.pcap"));
        }
    }
    let run = |json: bool| {
        let mut c = bin();
        c.current_dir(dir.path()).arg("compare").arg("--before");
        c.args(["before/host1/roce.pcap", "before/host2/roce.pcap", "--after"]);
        c.args(["after/host1/roce.pcap", "after/host2/roce.pcap"]);
        if json {
            c.arg("--json");
        }
        c.output().unwrap()
    };
    let o = run(true);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = common::compare_json(&o.stdout);
    assert_eq!(d["pairing"]["by"], "path_below_root");
    assert_eq!(d["pairing"]["before_root"], "before/");
    assert_eq!(d["pairing"]["after_root"], "after/");
    assert_eq!(d["pairing"]["paired"], 2);
    assert_eq!(d["unmatched"].as_array().map(Vec::len), Some(0));
    let pairs: Vec<(String, String)> = d["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["before_name"].as_str().unwrap().into(), p["name"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("before/host1/roce.pcap".to_string(), "after/host1/roce.pcap".to_string()),
            ("before/host2/roce.pcap".to_string(), "after/host2/roce.pcap".to_string())
        ]
    );
    let o = run(false);
    assert_eq!(o.status.code(), Some(0));
    let t = text(&o.stdout);
    assert!(
        t.contains("POINTS by their path below each side's directory (before/ and after/): 2 paired"),
        "{t}"
    );
    // Absolute paths too (each side's directory is its own).
    let abs = |v: &Vec<PathBuf>| v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
    let o = bin()
        .arg("compare")
        .arg("--before")
        .args(abs(&sides[0]))
        .arg("--after")
        .args(abs(&sides[1]))
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(common::compare_json(&o.stdout)["pairing"]["paired"], 2);
}
