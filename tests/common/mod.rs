//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use rocescope_capture::CaptureReader;
use rocescope_decoder::ext::AethKind;
use rocescope_decoder::{decode, DecodeOptions, IcrcStatus, MacControl, RoceVersion};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Say why a test skips: on stderr (shown with `--nocapture`) and in
/// `target/tmp/skipped-tests.txt`, which `.ci/run` prints at the end, so a skip never
/// passes unseen.
pub fn skip(reason: &str) {
    eprintln!("skipping: {reason}");
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| {
            p.file_stem().map(|s| s.to_string_lossy().split('-').next().unwrap_or_default().to_string())
        })
        .unwrap_or_default();
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        use std::io::Write;
        let _ = writeln!(f, "{binary}: {reason}");
    }
}

/// `../shared/real-captures`, or `$ROCESCOPE_REAL_CAPTURES`, when present. A
/// `$ROCESCOPE_REAL_CAPTURES` that names no capture folder is a mistake, not a skip.
pub fn real_captures() -> Option<PathBuf> {
    let set = std::env::var_os("ROCESCOPE_REAL_CAPTURES").map(PathBuf::from);
    let dir = set.clone().unwrap_or_else(|| root().join("../shared/real-captures"));
    if dir.join("INDEX.md").is_file() {
        Some(dir)
    } else {
        assert!(set.is_none(), "ROCESCOPE_REAL_CAPTURES={} holds no INDEX.md", dir.display());
        skip(&format!("no real captures at {} (set ROCESCOPE_REAL_CAPTURES)", dir.display()));
        None
    }
}

/// Every capture file in `dir` (pcap, pcapng, dump).
pub fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("pcap" | "pcapng" | "dump")));
    v.sort();
    v
}

/// Decode-level counts over a capture, with the same meaning as the samples' expectations
/// and the real captures' INDEX.md columns.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    pub frames: u64,
    pub roce_v2: u64,
    pub roce_v1: u64,
    pub cnp: u64,
    pub pfc: u64,
    pub pause: u64,
    pub naks: u64,
    pub icrc_valid: u64,
    /// Of `icrc_valid`, the RoCEv1 frames.
    pub icrc_valid_v1: u64,
    pub icrc_invalid: u64,
    pub icrc_truncated: u64,
    pub malformed: u64,
    pub opcodes: BTreeMap<String, u64>,
}

/// Decode a whole file (panics on a read error: the inputs here are well-formed).
pub fn count(path: &Path) -> Counts {
    let opts = DecodeOptions::default();
    let mut r = CaptureReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut c = Counts::default();
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        c.frames += 1;
        let p = decode(rec.link_type, rec.data, &opts);
        if let Some(roce) = p.roce_ok() {
            match roce.version {
                RoceVersion::V1 => c.roce_v1 += 1,
                RoceVersion::V2 => c.roce_v2 += 1,
            }
            if roce.bth.opcode().is_cnp() {
                c.cnp += 1;
            }
            if roce.ext.aeth.is_some_and(|a| matches!(a.kind(), AethKind::Nak | AethKind::RnrNak)) {
                c.naks += 1;
            }
            match roce.icrc.status {
                IcrcStatus::Valid => {
                    c.icrc_valid += 1;
                    if roce.version == RoceVersion::V1 {
                        c.icrc_valid_v1 += 1;
                    }
                }
                IcrcStatus::Invalid => c.icrc_invalid += 1,
                IcrcStatus::Truncated => c.icrc_truncated += 1,
                IcrcStatus::NotApplicable => {}
            }
            *c.opcodes.entry(roce.bth.opcode().name(opts.opcode).to_string()).or_default() += 1;
        }
        if p.is_malformed_roce() {
            c.malformed += 1;
        }
        match p.mac_control {
            Some(MacControl::Pfc(_)) => c.pfc += 1,
            Some(MacControl::Pause(_)) => c.pause += 1,
            _ => {}
        }
    }
    c
}

/// Every bundled sample, by file stem.
pub const SAMPLES: &[&str] = &[
    "rc-normal",
    "nak-gobackn",
    "rnr",
    "ecn-cnp",
    "pfc-storm",
    "qos-mismatch",
    "ipv6",
    "atomics",
    "ud",
    "bad-icrc",
    "truncated",
    "all-headers",
    "demo",
];

/// Every bundled sample: the demo's scenarios and the transport samples.
pub fn all_samples() -> impl Iterator<Item = &'static str> {
    SAMPLES.iter().chain(TRANSPORT_SAMPLES).copied()
}

/// The transport samples (not in the demo): each lists every finding its report must give.
pub const TRANSPORT_SAMPLES: &[&str] = &[
    "sampled-capture",
    "marking-ends",
    "qp-restart",
    "selective-repeat",
    "mtu-blackhole",
    "rhythm-straggler",
    "mirror-duplicates",
    "constant-ip-id",
    "read-tail-timeout",
    "incast",
    "read-implied-nak",
    "cc-reaction",
    "spurious-nak",
    "reorder-spray",
    "reorder-late",
    "one-direction",
    "uc-loss",
    "early-resend",
    "cm-timeout",
    "microburst",
    "nak-beyond",
    "cc-past-queue",
    "ce-idle-bursts",
    "pfc-no-ecn",
];

/// A tmux session that is killed when dropped.
pub struct Tmux {
    name: String,
}

impl Tmux {
    /// Start `cmd` in a detached 160x45 session; `None` (with a message) without tmux.
    pub fn start(cmd: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            skip("tmux is not installed");
            return None;
        }
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("rocescope-test-{}-{n}", std::process::id());
        let ok = Command::new("tmux")
            .args(["new-session", "-d", "-x", "160", "-y", "45", "-s", &name, cmd])
            .status()
            .expect("tmux")
            .success();
        assert!(ok, "tmux new-session");
        Some(Tmux { name })
    }

    /// Send keys (tmux names: `Enter`, `Escape`, `q`), pausing after each.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let ok = Command::new("tmux")
                .args(["send-keys", "-t", &self.name, k])
                .status()
                .expect("tmux")
                .success();
            assert!(ok);
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// The session's name (for tmux commands of a test's own).
    #[allow(dead_code)]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pane's text.
    pub fn screen(&self) -> String {
        let o = Command::new("tmux").args(["capture-pane", "-p", "-t", &self.name]).output().expect("tmux");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Wait (up to 10 s) for `text` to appear on the screen.
    pub fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "{text:?} never appeared; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The pane's title (what an OSC 0/2 sequence sets).
    pub fn title(&self) -> String {
        let o = Command::new("tmux")
            .args(["display-message", "-p", "-t", &self.name, "#{pane_title}"])
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The session still exists.
    pub fn alive(&self) -> bool {
        Command::new("tmux").args(["has-session", "-t", &self.name]).status().is_ok_and(|s| s.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["kill-session", "-t", &self.name]).status();
    }
}

/// The sum of one metric's series in an NDJSON line of `rocescope export --push`.
#[allow(dead_code)] // not every test binary pushes
pub fn pushed_sum(line: &serde_json::Value, name: &str) -> f64 {
    line["metrics"]
        .as_array()
        .map(|a| a.iter().filter(|m| m["name"] == name).filter_map(|m| m["value"].as_f64()).sum())
        .unwrap_or(0.0)
}

/// A shipped JSON Schema made strict: every object it describes may hold only the
/// properties it lists. The shipped schemas allow more (a later version may add fields);
/// the tests hold this version's output to exactly what the schema documents.
fn strict_validator(file: &str) -> jsonschema::Validator {
    fn strict(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                if m.contains_key("properties") && !m.contains_key("additionalProperties") {
                    m.insert("additionalProperties".into(), serde_json::Value::Bool(false));
                }
                m.values_mut().for_each(strict);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strict),
            _ => {}
        }
    }
    let mut schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join("docs").join(file)).expect("schema"))
            .expect("JSON");
    strict(&mut schema);
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// Every absolute time (`ts_ns`, `start_ns`, `end_ns`, `first_ns`, `last_ns`) has its exact
/// decimal-seconds twin beside it (docs/report-json.md, docs/decode-json.md).
pub fn check_time_twins(v: &serde_json::Value, path: &str) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if let Some(stem) =
                    k.strip_suffix("_ns").filter(|s| ["ts", "start", "end", "first", "last"].contains(s))
                {
                    let twin = m.get(stem).unwrap_or_else(|| panic!("{path}.{k} has no twin {stem:?}"));
                    let want = match x.as_i64() {
                        Some(ns) => {
                            let a = ns.unsigned_abs();
                            let sign = if ns < 0 { "-" } else { "" };
                            serde_json::Value::from(format!(
                                "{sign}{}.{:09}",
                                a / 1_000_000_000,
                                a % 1_000_000_000
                            ))
                        }
                        None => serde_json::Value::Null,
                    };
                    assert_eq!(twin, &want, "{path}.{stem}");
                }
                check_time_twins(x, &format!("{path}.{k}"));
            }
        }
        serde_json::Value::Array(a) => {
            a.iter().enumerate().for_each(|(i, x)| check_time_twins(x, &format!("{path}[{i}]")))
        }
        _ => {}
    }
}

/// Check a report document against `docs/report.schema.json` (strictly) and the time rule.
pub fn check_report(v: &serde_json::Value) {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = V.get_or_init(|| strict_validator("report.schema.json"));
    let errors: Vec<String> =
        validator.iter_errors(v).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the report does not match docs/report.schema.json:\n{}", errors.join("\n"));
    check_time_twins(v, "");
}

/// Parse `rocescope report --json` output and check it ([`check_report`]).
pub fn report_json(stdout: &[u8]) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("report JSON: {e}: {}", String::from_utf8_lossy(stdout)));
    check_report(&v);
    v
}

/// Parse `rocescope compare --json` output, checking it against `docs/compare.schema.json`
/// (strictly).
pub fn compare_json(stdout: &[u8]) -> serde_json::Value {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = V.get_or_init(|| strict_validator("compare.schema.json"));
    let v: serde_json::Value = serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("compare JSON: {e}: {}", String::from_utf8_lossy(stdout)));
    let errors: Vec<String> =
        validator.iter_errors(&v).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "does not match docs/compare.schema.json:\n{}", errors.join("\n"));
    v
}

/// Parse `rocescope decode --json` output, checking every line against
/// `docs/decode.schema.json` (strictly) and the time rule.
pub fn decode_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = V.get_or_init(|| strict_validator("decode.schema.json"));
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            let errors: Vec<String> =
                validator.iter_errors(&v).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{l}\ndoes not match docs/decode.schema.json:\n{}", errors.join("\n"));
            check_time_twins(&v, "");
            v
        })
        .collect()
}

/// Every `.pcap` under `dir`, in name order, subdirectories included.
pub fn pcaps_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "pcap") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out
}

/// Analyse a whole file with the library as shard `index` of `count` (1: the whole
/// analysis), finished.
pub fn analyse(path: &Path, index: u32, count: u32) -> rocescope_analyzer::Analyzer {
    let opts = DecodeOptions::default();
    let mut a = rocescope_analyzer::Analyzer::new(rocescope_analyzer::Config::default());
    assert!(a.set_shard(index, count));
    let mut r = CaptureReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut n = 0;
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        n += 1;
        let p = decode(rec.link_type, rec.data, &opts);
        a.push_frame(n, &rec, &p, &opts);
    }
    a.finish();
    a
}

/// The IPv4 header of a built test frame from 10.0.0.`src` to 10.0.0.`dst`: DSCP 26, ECT(0).
pub fn ipv4(src: u8, dst: u8) -> rocescope_decoder::build::IpRepr {
    rocescope_decoder::build::IpRepr::V4 {
        src: std::net::Ipv4Addr::new(10, 0, 0, src),
        dst: std::net::Ipv4Addr::new(10, 0, 0, dst),
        dscp: 26,
        ecn: rocescope_decoder::Ecn::Ect0,
        ttl: 64,
        id: 0,
    }
}

/// A classic pcap at `path` of `count` records, `frames` over and over 100 ns apart: a
/// capture larger than a debug build reads before a signal sent a moment after it starts.
pub fn repeated_capture(path: &Path, frames: &[Vec<u8>], count: usize) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = rocescope_capture::PcapWriter::new(
        std::io::BufWriter::new(file),
        rocescope_decoder::LinkType::ETHERNET,
        65535,
    )
    .unwrap();
    let mut ts = 1_767_225_600_000_000_000i64;
    for f in frames.iter().cycle().take(count) {
        ts += 100;
        w.write(ts, f, f.len() as u32).unwrap();
    }
}

/// Wait `ms` milliseconds, send SIGINT to `child` and collect what it wrote.
pub fn interrupt_after(child: std::process::Child, ms: u64) -> std::process::Output {
    std::thread::sleep(Duration::from_millis(ms));
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    child.wait_with_output().unwrap()
}
