//! `rocescope report --parquet DIR` end to end: the files read back with the parquet crate
//! hold what the JSON report says; docs/parquet.md's DuckDB query (when DuckDB's Python module is
//! installed) gives the same answer; several captures share a directory; errors are clear.

mod common;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

fn sample(name: &str) -> String {
    common::root().join("samples").join(name).to_string_lossy().into_owned()
}

fn report(dir: &Path, file: &str) -> (Output, serde_json::Value) {
    let o = bin()
        .args(["report", "--json", "--parquet", dir.to_str().unwrap(), "-r", &sample(file)])
        .output()
        .expect("run rocescope");
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&o.stderr));
    let v = common::report_json(&o.stdout);
    (o, v)
}

/// The files in `dir` whose names start with `prefix` and end in `.parquet`, sorted.
fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(prefix) && n.ends_with(".parquet")
        })
        .collect();
    v.sort();
    v
}

fn read(path: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// An unsigned integer column of any width, nulls as `None`.
fn uints(batches: &[RecordBatch], name: &str) -> Vec<Option<u64>> {
    let mut out = Vec::new();
    for b in batches {
        let c = b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}"));
        for i in 0..c.len() {
            out.push((!c.is_null(i)).then(|| match c.data_type() {
                DataType::UInt8 => u64::from(c.as_primitive::<UInt8Type>().value(i)),
                DataType::UInt16 => u64::from(c.as_primitive::<UInt16Type>().value(i)),
                DataType::UInt32 => u64::from(c.as_primitive::<UInt32Type>().value(i)),
                DataType::UInt64 => c.as_primitive::<UInt64Type>().value(i),
                t => panic!("{name} is {t}"),
            }));
        }
    }
    out
}

fn strings(batches: &[RecordBatch], name: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for b in batches {
        let c = b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}")).as_string::<i32>();
        out.extend((0..c.len()).map(|i| (!c.is_null(i)).then(|| c.value(i).to_string())));
    }
    out
}

fn no_temporary_files(dir: &Path) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn the_files_hold_what_the_json_report_says() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("new/sub");
    let (o, v) = report(&out, "demo.pcap");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("packets-demo-20260101T000000Z.parquet"), "{err}");
    no_temporary_files(&out);
    let s = &v["summary"];

    // Packets: one row per RoCE packet (those that decoded whole are the report's `roce`),
    // per PFC and per PAUSE frame.
    let [packets] = files(&out, "packets-").try_into().unwrap();
    let p = read(&packets);
    let schema = p[0].schema();
    assert_eq!(
        schema.field_with_name("ts_ns").unwrap().data_type(),
        &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
    );
    let kind = strings(&p, "kind");
    let error = strings(&p, "error");
    let count = |k: &str, whole: bool| {
        kind.iter().zip(&error).filter(|(x, e)| x.as_deref() == Some(k) && (!whole || e.is_none())).count()
    };
    assert_eq!(count("roce", true) as u64, s["roce"].as_u64().unwrap());
    assert_eq!(count("pfc", false) as u64, s["pfc_frames"].as_u64().unwrap());
    assert_eq!(count("pause", false) as u64, s["pause_frames"].as_u64().unwrap());
    let opcode = uints(&p, "bth_opcode");
    assert_eq!(opcode.iter().filter(|o| **o == Some(0x81)).count() as u64, s["cnps"].as_u64().unwrap());
    assert!(strings(&p, "capture").iter().all(|c| c.as_deref() == Some("demo.pcap")));
    // The wire bytes of the RoCE rows are the report's RoCE bytes.
    let wire = uints(&p, "wire_len");
    let roce_bytes: u64 = kind
        .iter()
        .zip(&error)
        .zip(&wire)
        .filter(|((k, e), _)| k.as_deref() == Some("roce") && e.is_none())
        .map(|(_, w)| w.unwrap())
        .sum();
    assert_eq!(roce_bytes, s["roce_bytes"].as_u64().unwrap());
    // A few packets against `decode --json`: the NAK and the RNR NAK of the demo.
    let d = bin().args(["decode", "--json", "-r", &sample("demo.pcap")]).output().unwrap();
    let lines = common::decode_lines(&d.stdout);
    let frame = uints(&p, "frame");
    let psn = uints(&p, "bth_psn");
    let dqpn = uints(&p, "bth_dqpn");
    let nak = strings(&p, "aeth_nak");
    let ip_src = strings(&p, "ip_src");
    let mut checked = 0;
    for (i, f) in frame.iter().enumerate() {
        let j = &lines[f.unwrap() as usize - 1];
        assert_eq!(j["frame"].as_u64(), *f);
        assert_eq!(j["bth"]["psn"].as_u64(), psn[i], "frame {f:?}");
        assert_eq!(j["bth"]["dqpn"].as_u64(), dqpn[i], "frame {f:?}");
        assert_eq!(j["ip"]["src"].as_str(), ip_src[i].as_deref(), "frame {f:?}");
        assert_eq!(j["aeth"]["nak"].as_str(), nak[i].as_deref(), "frame {f:?}");
        checked += usize::from(nak[i].is_some());
    }
    assert!(checked >= 1, "the demo has a NAK");

    // Flows: one row per flow, the same figures.
    let [flows] = files(&out, "flows-").try_into().unwrap();
    let f = read(&flows);
    let jf = v["flows"].as_array().unwrap();
    assert_eq!(rows(&f), jf.len());
    assert_eq!(rows(&f) as u64, s["flows"].as_u64().unwrap());
    let id = uints(&f, "id");
    let (src, dst) = (strings(&f, "src"), strings(&f, "dst"));
    for (i, fid) in id.iter().enumerate() {
        let j = &jf[fid.unwrap() as usize];
        assert_eq!(j["src"].as_str(), src[i].as_deref());
        assert_eq!(j["dst"].as_str(), dst[i].as_deref());
        for (col, path) in [
            ("dest_qp", "/dest_qp"),
            ("packets", "/packets"),
            ("bytes", "/bytes"),
            ("psn_gaps", "/psn/gaps"),
            ("psn_network_loss_gaps", "/psn/network_loss_gaps"),
            ("psn_retransmits_nak", "/psn/retransmits_nak"),
            ("naks_rnr", "/naks/rnr"),
            ("ecn_ce", "/ecn/ce"),
            ("cnps", "/cnps"),
            ("latency_ack_p50_ns", "/latency/ack/p50_ns"),
            ("cc_cnp_too_fast", "/cc/cnp_too_fast"),
            ("cc_reaction_fell", "/cc/reaction/fell"),
            ("cc_reaction_evaluated", "/cc/reaction/evaluated"),
            ("cc_cnp_interval_p50_ns", "/cc/cnp_interval/p50_ns"),
            ("burst_bin_ns", "/throughput/burst/bin_ns"),
            ("burst_offset_ns", "/throughput/burst/peak_offset_ns"),
            ("burst_ce", "/throughput/burst/ce_peak"),
        ] {
            assert_eq!(uints(&f, col)[i], j.pointer(path).and_then(|x| x.as_u64()), "flow {fid:?} {col}");
        }
        assert_eq!(strings(&f, "health")[i].as_deref(), j["health"].as_str());
        let peak =
            f[0].column_by_name("throughput_peak_gbps").unwrap().as_primitive::<Float64Type>().value(i);
        assert_eq!(Some(peak), j["throughput"]["peak_gbps"].as_f64());
        let burst = f[0].column_by_name("burst_gbps").unwrap().as_primitive::<Float64Type>().value(i);
        assert_eq!(Some(burst), j["throughput"]["burst"]["peak_gbps"].as_f64());
    }

    // Intervals: each flow's bins add up to its bytes and packets.
    let [intervals] = files(&out, "intervals-").try_into().unwrap();
    let t = read(&intervals);
    let (tid, tbytes, tpk) = (uints(&t, "id"), uints(&t, "bytes"), uints(&t, "packets"));
    let tcnps = uints(&t, "cnps");
    for j in jf {
        let fid = j["id"].as_u64();
        let sum = |v: &[Option<u64>]| -> u64 {
            tid.iter().zip(v).filter(|(i, _)| **i == fid).map(|(_, x)| x.unwrap()).sum()
        };
        assert_eq!(Some(sum(&tbytes)), j["bytes"].as_u64(), "flow {fid:?}");
        assert_eq!(Some(sum(&tpk)), j["packets"].as_u64(), "flow {fid:?}");
        let cnps: u64 = j["throughput"]["cnps"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
        assert_eq!(sum(&tcnps), cnps, "flow {fid:?}");
    }
    assert!(tcnps.iter().any(|c| c.unwrap() > 0), "the demo's senders received CNPs");
}

#[test]
fn docs_parquet_md_lists_every_column() {
    let doc = std::fs::read_to_string(common::root().join("docs/parquet.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    report(dir.path(), "demo.pcap");
    let mut missing = Vec::new();
    for path in files(dir.path(), "") {
        let f = std::fs::File::open(&path).unwrap();
        let schema = ParquetRecordBatchReaderBuilder::try_new(f).unwrap().schema().clone();
        for field in schema.fields() {
            let name = field.name();
            // The latency columns are documented as `latency_ack_*`, ... with their suffixes.
            let group = name.starts_with("latency_").then(|| {
                let stem = ["_count", "_min_ns", "_mean_ns", "_p50_ns", "_p99_ns", "_max_ns"]
                    .iter()
                    .find_map(|s| name.strip_suffix(s))
                    .unwrap_or(name);
                format!("`{stem}_*`")
            });
            let listed = doc.contains(&format!("`{name}`")) || group.is_some_and(|g| doc.contains(&g));
            if !listed {
                missing.push(format!("{}: {name}", path.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    assert!(missing.is_empty(), "docs/parquet.md does not list: {missing:?}");
}

/// docs/parquet.md's query: the lines of the SQL block after `<!-- parquet query -->`.
fn documented_query() -> String {
    let page = std::fs::read_to_string(common::root().join("docs/parquet.md")).unwrap();
    let at = page.find("<!-- parquet query -->").expect("docs/parquet.md marks its Parquet query");
    let rest = &page[at..];
    let start = rest.find("```sql\n").expect("an sql block") + 7;
    let end = rest[start..].find("```").unwrap();
    rest[start..start + end].to_string()
}

#[test]
fn the_documented_query_runs_in_duckdb() {
    let query = documented_query();
    assert!(query.contains("'parquet/flows-*.parquet'"), "{query}");
    // DuckDB's Python module (in the interpreter `ROCESCOPE_PYTHON` names: .ci/run's
    // virtual environment), else its command-line shell.
    let py = std::env::var("ROCESCOPE_PYTHON").unwrap_or_else(|_| "python3".into());
    let python = Command::new(&py).args(["-c", "import duckdb"]).output().is_ok_and(|o| o.status.success());
    let cli = !python && Command::new("duckdb").arg("-version").output().is_ok_and(|o| o.status.success());
    if !python && !cli {
        common::skip("neither DuckDB's Python module (pip install duckdb) nor its CLI is installed: docs/parquet.md's query is not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("parquet");
    let (_, demo) = report(&out, "demo.pcap");
    let (_, nak) = report(&out, "nak-gobackn.pcap");
    let got: Vec<Vec<String>> = if python {
        let script = format!(
            "import duckdb, json\nrows = duckdb.sql({query:?}).fetchall()\nprint(json.dumps([[str(x) for x in r] for r in rows]))"
        );
        let o = Command::new(&py).arg("-c").arg(&script).current_dir(dir.path()).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    } else {
        let o = Command::new("duckdb")
            .args(["-csv", "-noheader", "-c", &query])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    };
    // The same answer from the JSON reports: flows with network loss, worst first.
    let mut want: Vec<(u64, u64, String, String, String, u64)> = Vec::new();
    for (name, v) in [("demo.pcap", &demo), ("nak-gobackn.pcap", &nak)] {
        for f in v["flows"].as_array().unwrap() {
            let gaps = f["psn"]["network_loss_gaps"].as_u64().unwrap();
            if gaps > 0 {
                want.push((
                    gaps,
                    f["psn"]["retransmits"].as_u64().unwrap(),
                    name.to_string(),
                    f["src"].as_str().unwrap().to_string(),
                    f["dst"].as_str().unwrap().to_string(),
                    f["dest_qp"].as_u64().unwrap(),
                ));
            }
        }
    }
    want.sort_by_key(|w| std::cmp::Reverse((w.0, w.1)));
    want.truncate(10);
    assert!(want.len() >= 2, "both captures lose packets");
    let got_key: Vec<(String, String, String, u64, u64)> = got
        .iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone(), r[3].parse().unwrap(), r[4].parse().unwrap()))
        .collect();
    let mut want_key: Vec<_> =
        want.iter().map(|w| (w.2.clone(), w.3.clone(), w.4.clone(), w.5, w.0)).collect();
    let mut got_sorted = got_key.clone();
    got_sorted.sort();
    want_key.sort();
    assert_eq!(got_sorted, want_key, "duckdb: {got:?}");
}

#[test]
fn captures_share_a_directory_and_a_rerun_replaces_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let (_, demo) = report(out, "demo.pcap");
    let (_, rnr) = report(out, "rnr.pcap");
    assert_eq!(files(out, "").len(), 6);
    // A glob over the flows sees both captures.
    let all: Vec<RecordBatch> = files(out, "flows-").iter().flat_map(|p| read(p)).collect();
    let n = |v: &serde_json::Value| v["flows"].as_array().unwrap().len();
    assert_eq!(rows(&all), n(&demo) + n(&rnr));
    let mut captures: Vec<String> = strings(&all, "capture").into_iter().flatten().collect();
    captures.dedup();
    assert_eq!(captures, ["demo.pcap", "rnr.pcap"]);
    // The same capture again replaces its own files.
    let before = files(out, "");
    report(out, "demo.pcap");
    assert_eq!(files(out, ""), before);
    // Another capture with the same name and start never overwrites them.
    let other = tempfile::tempdir().unwrap();
    let copy = other.path().join("demo.pcap");
    std::fs::copy(sample("rc-normal.pcap"), &copy).unwrap();
    let o = bin()
        .args(["report", "-q", "--parquet", out.to_str().unwrap(), "-r", copy.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("next free suffix"));
    let flows = files(out, "flows-demo-");
    assert_eq!(flows.len(), 2, "{flows:?}");
    let (second, first): (Vec<_>, Vec<_>) =
        flows.iter().partition(|p| p.to_string_lossy().ends_with("-2.parquet"));
    assert_eq!((first.len(), second.len()), (1, 1), "{flows:?}");
    assert_eq!(rows(&read(first[0])), n(&demo));
    assert!(rows(&read(second[0])) < n(&demo));
    no_temporary_files(out);
}

#[test]
fn an_unwritable_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let target = file.join("parquet");
    let o = bin()
        .args(["report", "--parquet", target.to_str().unwrap(), "-r", &sample("demo.pcap")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot create the Parquet directory") && err.contains("a-file/parquet"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty(), "nothing is analysed before the directory is usable");
}

#[test]
fn a_full_disk_leaves_no_file_and_says_so() {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root {
        common::skip("not root: cannot mount a small tmpfs to fill");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs", mnt.to_str().unwrap()])
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        common::skip("cannot mount a small tmpfs");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).output();
        }
    }
    let _guard = Unmount(mnt.clone());
    let o = bin()
        .args(["report", "--parquet", mnt.to_str().unwrap(), "-r", &sample("demo.pcap")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left") && err.contains(mnt.to_str().unwrap()), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The report itself is still printed.
    assert!(String::from_utf8_lossy(&o.stdout).contains("FINDINGS"));
    let left: Vec<_> =
        std::fs::read_dir(&mnt).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn congestion_control_figures_reach_the_flow_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pq");
    let (o, v) = report(&out, "cc-reaction.pcap");
    assert!(o.status.code().is_some_and(|c| c == 0 || c == 3), "{}", String::from_utf8_lossy(&o.stderr));
    let [flows] = files(&out, "flows-").try_into().unwrap();
    let f = read(&flows);
    let (id, fell, evaluated) =
        (uints(&f, "id"), uints(&f, "cc_reaction_fell"), uints(&f, "cc_reaction_evaluated"));
    let jf = v["flows"].as_array().unwrap();
    let mut reacting = 0;
    for (i, fid) in id.iter().enumerate() {
        let j = &jf[fid.unwrap() as usize];
        assert_eq!(fell[i], j.pointer("/cc/reaction/fell").and_then(|x| x.as_u64()));
        assert_eq!(evaluated[i], j.pointer("/cc/reaction/evaluated").and_then(|x| x.as_u64()));
        assert_eq!(fell[i].is_none(), j["cc"].is_null(), "null exactly where the JSON has no cc");
        reacting += usize::from(fell[i].is_some_and(|n| n >= 5));
    }
    assert!(reacting >= 1, "QP 0x122 reacts to its CNPs");
}

/// The training rhythm reaches the flow table: each flow's bursts, and the iterations its
/// burst ended (the straggler's QP every time).
#[test]
fn bursts_and_the_iterations_a_flow_ended_reach_the_flow_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pq");
    let (o, v) = report(&out, "rhythm-straggler.pcap");
    assert!(o.status.code().is_some_and(|c| c == 0 || c == 4), "{}", String::from_utf8_lossy(&o.stderr));
    let [flows] = files(&out, "flows-").try_into().unwrap();
    let f = read(&flows);
    let (id, bursts, last) = (uints(&f, "id"), uints(&f, "bursts"), uints(&f, "iterations_last"));
    let jf = v["flows"].as_array().unwrap();
    for (i, fid) in id.iter().enumerate() {
        let j = &jf[fid.unwrap() as usize];
        assert_eq!(bursts[i], j["bursts"].as_u64());
        // Every data flow sent eight bursts; the ACK flows none.
        let data = j["requests"].as_u64().unwrap() > 0;
        assert_eq!(bursts[i], Some(if data { 8 } else { 0 }), "{j:#}");
        let straggler = j["dest_qp"] == 0x605;
        assert_eq!(last[i], Some(if straggler { 6 } else { 0 }), "{j:#}");
    }
}

/// The ECMP picture reaches the flow table: each elephant's rank, and the path the modelled
/// hash puts each data flow on (per path, the flows the JSON counts; the host pair that
/// shares one source port all on the overloaded path).
#[test]
fn elephant_ranks_and_predicted_paths_reach_the_flow_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pq");
    let o = bin()
        .args(["report", "--json", "--parquet", out.to_str().unwrap(), "--ecmp-paths", "4"])
        .args(["-r", &sample("ecmp/low-entropy.pcap")])
        .output()
        .expect("run rocescope");
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&o.stderr));
    let v = common::report_json(&o.stdout);
    let [flows] = files(&out, "flows-").try_into().unwrap();
    let f = read(&flows);
    let (id, rank, path) = (uints(&f, "id"), uints(&f, "elephant_rank"), uints(&f, "ecmp_path"));
    let ranked: Vec<(u64, u64)> =
        id.iter().zip(&rank).filter_map(|(i, r)| Some((r.as_ref().copied()?, i.unwrap()))).collect();
    let mut ranked = ranked;
    ranked.sort_unstable();
    let top: Vec<(u64, u64)> = v["elephants"]["top"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, e)| (i as u64 + 1, e["flow"].as_u64().unwrap()))
        .collect();
    assert_eq!(ranked, top, "ranks as the JSON's elephants");
    let p = &v["ecmp"]["prediction"];
    let loads = p["loads"].as_array().unwrap();
    for l in loads {
        let n = path.iter().filter(|x| **x == l["path"].as_u64()).count();
        assert_eq!(Some(n as u64), l["flows"].as_u64(), "path {}", l["path"]);
    }
    let jf = v["flows"].as_array().unwrap();
    let busiest = p["busiest"].as_u64();
    for (i, fid) in id.iter().enumerate() {
        let j = &jf[fid.unwrap() as usize];
        if j["udp_src_port"] == 49152 && j["payload_bytes"].as_u64() > Some(0) {
            assert_eq!(path[i], busiest, "{j:#}");
        }
        if j["payload_bytes"] == 0 {
            assert_eq!(path[i], None, "only data flows are placed: {j:#}");
        }
    }
}

/// Temporary files cannot be redirected: they are created exclusively under random names, so
/// a symlink planted at the name an earlier build used (`.TABLE-STEM.PID.parquet.tmp`, PID
/// guessable) is never written through, and leftovers of runs that died (a PID no longer
/// running) are removed on the next run, as links, never followed; a live run's are kept.
#[test]
fn temporary_files_are_created_exclusively_and_dead_leftovers_removed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"keep me").unwrap();
    // What the old predictable names would be for the next few PIDs, and a dead run's
    // leftovers (one a symlink to the victim), and a live run's file (this test's PID).
    let next = std::process::id();
    for pid in next..next + 200 {
        for t in ["packets", "flows", "intervals"] {
            let p = dir.path().join(format!(".{t}-rc-normal.{pid}.parquet.tmp"));
            let _ = std::os::unix::fs::symlink(&victim, p);
        }
    }
    let dead = dir.path().join(".flows-rc-normal.4000000.abc123.parquet.tmp");
    std::os::unix::fs::symlink(&victim, &dead).unwrap();
    let dead_file = dir.path().join(".packets-rc-normal.4000001.zz9.parquet.tmp");
    std::fs::write(&dead_file, b"partial").unwrap();
    let live = dir.path().join(format!(".packets-other.{next}.xyz.parquet.tmp"));
    std::fs::write(&live, b"running").unwrap();
    let (o, v) = report(dir.path(), "rc-normal.pcap");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me", "the victim was written through a symlink");
    assert!(!dead.exists() && std::fs::symlink_metadata(&dead).is_err(), "a dead run's leftover link stays");
    assert!(!dead_file.exists(), "a dead run's leftover stays");
    assert!(live.exists(), "a running process's file was removed");
    // The files are as File::create makes them (the umask decides), not owner-only.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let plain = dir.path().join("plain");
    std::fs::File::create(&plain).unwrap();
    assert_eq!(mode(&files(dir.path(), "flows-")[0]), mode(&plain));
    let flows = files(dir.path(), "flows-");
    assert_eq!(flows.len(), 1, "{flows:?}");
    assert_eq!(rows(&read(&flows[0])), v["flows"].as_array().unwrap().len());
}
