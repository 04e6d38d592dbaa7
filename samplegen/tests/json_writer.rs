//! The report's JSON writer (`rocescope_output::json`, what `report --json` uses) writes the
//! bytes of the reference it replaced (`json::legacy`, serde_json with the time-twin
//! formatter) on the bench captures this generator writes (`--bulk`: many QPs, the shape
//! where the JSON is most of the run; `--mixed`: CNPs, READs and pauses too), for one
//! analyzer and for three shards merged as `report --threads 3` merges them; and the flows'
//! entries written on several threads (`json::report_to_writer_threads`) give those bytes. (The samples
//! and the real captures: the workspace's `tests/json_writer.rs`.)

use rocescope_analyzer::{parallel, Analyzer};
use rocescope_output::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A bench capture written by the generator (`--bulk FILE` and `args`).
fn bench(name: &str, args: &[&str]) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("json-writer-{name}.pcap"));
    let out = Command::new(env!("CARGO_BIN_EXE_rocescope-samplegen"))
        .arg("--bulk")
        .arg(&path)
        .args(args)
        .output()
        .expect("run the generator");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

/// Shard `index` of `count`, fed as `report --threads` feeds it.
fn analyse(path: &Path, index: u32, count: u32) -> Analyzer {
    let opts = rocescope_decoder::DecodeOptions::default();
    let mut a = Analyzer::new(rocescope_analyzer::Config::default());
    assert!(a.set_shard(index, count));
    let mut r = rocescope_capture::CaptureReader::open(path).unwrap();
    let mut n = 0;
    while let Some(rec) = r.next_record().unwrap() {
        n = rec.number_after(n);
        a.push_shard_record(n, &rec, &opts);
    }
    a.finish();
    a
}

fn check(path: &Path, flows_at_least: usize) {
    for count in [1, 3] {
        let mut shards: Vec<Analyzer> = (0..count).map(|i| analyse(path, i, count)).collect();
        let a = match shards.len() {
            1 => shards.pop().unwrap(),
            _ => parallel::merge(shards).unwrap(),
        };
        let streamed = a.report_streamed();
        assert!(streamed.flow_count() >= flows_at_least, "{}", streamed.flow_count());
        let mut fast = Vec::new();
        json::report_to_writer(&mut fast, &streamed).unwrap();
        let reference = json::legacy::to_vec(&streamed).unwrap();
        if fast != reference {
            let at = fast
                .iter()
                .zip(&reference)
                .position(|(x, y)| x != y)
                .unwrap_or(fast.len().min(reference.len()));
            let around = |d: &[u8]| {
                String::from_utf8_lossy(d.get(at.saturating_sub(80)..(at + 80).min(d.len())).unwrap_or(&[]))
                    .into_owned()
            };
            panic!(
                "{} with {count} shards differs at byte {at}:\n  fast: {}\n  reference: {}",
                path.display(),
                around(&fast),
                around(&reference)
            );
        }
        assert_eq!(json::to_vec(&streamed).unwrap(), fast, "{}", path.display());
        // The flows' entries built and formatted on several threads, in chunks handed over
        // in order (`report --threads N --json`): the same bytes.
        for threads in [2, 3, 8] {
            let mut parallel = Vec::new();
            json::report_to_writer_threads(&mut parallel, &streamed, threads).unwrap();
            assert!(parallel == fast, "{} on {threads} JSON threads differs", path.display());
        }
    }
}

/// The report bench's many-QP shape (q10k-200k: 200,000 WRITE frames and their ACKs over
/// 10,000 QPs, 20,000 flows of 10 frames), where the JSON is most of the run.
#[test]
fn a_bulk_bench_capture_writes_the_reference_bytes() {
    let path = bench("bulk", &["--packets", "200000", "--qps", "10000", "--snap", "128"]);
    check(&path, 20_000);
}

/// The mixed bench traffic: CNPs, READs and PFC pauses besides the WRITEs.
#[test]
fn a_mixed_bench_capture_writes_the_reference_bytes() {
    let path = bench(
        "mixed",
        &[
            "--packets",
            "40000",
            "--qps",
            "1024",
            "--msg-pkts",
            "3",
            "--snap",
            "128",
            "--pause-hosts",
            "128",
            "--mixed",
        ],
    );
    check(&path, 1024);
}
