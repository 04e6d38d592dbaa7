//! `rocescope-samplegen [DIR]`: write the bundled sample captures and, beside each, a
//! `NAME.expected.json` with what a decoder and an analyzer must find in it.
//! `--check DIR` regenerates in memory and fails if any file on disk differs.
//! `samples/tunnels/` holds the demo wrapped in each mirror or overlay encapsulation;
//! `samples/capture/` the demo in a pcapng that records the capture's drops; `samples/ecmp/`
//! the ECMP cases (one host pair on one UDP port, a leaf's four uplinks as four captures);
//! `samples/nccl/` an NCCL job's capture with the environment files it is checked against.

mod bulk;
mod capture_stats;
mod fabric;
mod scenarios;
mod scenarios_compare;
mod scenarios_ecmp;
mod scenarios_nccl;
mod scenarios_pfc;
mod scenarios_qos;
mod scenarios_quality;
mod scenarios_rhythm;
mod scenarios_sflow;
mod scenarios_transport;
mod tunnels;

use fabric::{FlowExpect, Gen};
use rocescope_capture::PcapWriter;
use rocescope_decoder::LinkType;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Serialize)]
struct PauseExpect {
    src_mac: String,
    kind: &'static str,
    priority: u8,
    pause_frames: u64,
    xon_frames: u64,
    quanta_total: u64,
}

#[derive(Serialize)]
struct Expected<'a> {
    file: String,
    description: &'a str,
    counts: &'a fabric::Counts,
    events: &'a [fabric::Event],
    flows: Vec<&'a FlowExpect>,
    pauses: Vec<PauseExpect>,
    /// Every finding the report must give (transport samples; absent elsewhere).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    findings: &'a [fabric::FindingExpect],
}

fn render(name: &str, description: &str, g: &Gen) -> (Vec<u8>, Vec<u8>) {
    let mut pcap = Vec::new();
    {
        let mut w = match PcapWriter::new(&mut pcap, LinkType::ETHERNET, 65535) {
            Ok(w) => w,
            Err(e) => unreachable_io(e),
        };
        for f in &g.frames {
            let keep = f.snap.min(f.data.len());
            if let Err(e) = w.write(f.ts_ns, f.data.get(..keep).unwrap_or(&f.data), f.len) {
                unreachable_io(e);
            }
        }
    }
    let exp = Expected {
        file: format!("{name}.pcap"),
        description,
        counts: &g.counts,
        events: &g.events,
        flows: g.flows.values().collect(),
        pauses: g
            .pauses
            .iter()
            .map(|((mac, kind, p), (n, x, q))| PauseExpect {
                src_mac: mac.clone(),
                kind,
                priority: *p,
                pause_frames: *n,
                xon_frames: *x,
                quanta_total: *q,
            })
            .collect(),
        findings: &g.findings,
    };
    let mut json = serde_json::to_vec_pretty(&exp).unwrap_or_default();
    json.push(b'\n');
    (pcap, json)
}

fn unreachable_io(e: std::io::Error) -> ! {
    eprintln!("rocescope-samplegen: writing to memory failed: {e}");
    std::process::exit(1)
}

fn outputs() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut demo = Gen::new();
    for (name, description, build) in scenarios::SCENARIOS {
        let mut g = Gen::new();
        build(&mut g);
        let (pcap, json) = render(name, description, &g);
        files.push((format!("{name}.pcap"), pcap));
        files.push((format!("{name}.expected.json"), json));
        build(&mut demo);
        demo.wait_us(100);
    }
    // Transport cases from real fabrics: samples of their own, not in the demo.
    for (name, description, build) in scenarios_transport::TRANSPORT {
        let mut g = Gen::new();
        build(&mut g);
        let (pcap, json) = render(name, description, &g);
        files.push((format!("{name}.pcap"), pcap));
        files.push((format!("{name}.expected.json"), json));
    }
    let (pcap, json) = render("demo", "Every scenario in one capture, one after another", &demo);
    files.push(("demo.pcap".into(), pcap));
    files.push(("demo.expected.json".into(), json));
    files.extend(scenarios_sflow::outputs(&demo));
    files.extend(tunnels::outputs(&demo));
    files.extend(capture_stats::outputs(&demo));
    // One connection captured at both ends (`rocescope report -r two-points-sender.pcap -r
    // two-points-receiver.pcap`): the receiver misses a packet the sender sent, and its clock
    // runs ahead. The answers are asserted in tests/multi.rs.
    let (mut g, lost) = scenarios::two_points();
    let (sender, _) = render("two-points-sender", "", &g);
    let frames = std::mem::take(&mut g.frames);
    g.frames = frames
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !lost.contains(i))
        .map(|(_, mut f)| {
            // The sender's frames reach the receiver a path delay later; the receiver's own
            // (NAK, ACK) left it a path delay before the sender's capture saw them.
            let from_receiver = f.data.get(26..30) == Some(&[10, 0, 0, 2][..]);
            let delay = if from_receiver { -scenarios::PATH_DELAY_NS } else { scenarios::PATH_DELAY_NS };
            f.ts_ns += scenarios::RECEIVER_CLOCK_OFFSET_NS + delay;
            f
        })
        .collect();
    // A capture is in its own clock's order.
    g.frames.sort_by_key(|f| f.ts_ns);
    let (receiver, _) = render("two-points-receiver", "", &g);
    files.push(("two-points-sender.pcap".into(), sender));
    files.push(("two-points-receiver.pcap".into(), receiver));
    files.extend(scenarios_pfc::outputs());
    files.extend(scenarios_qos::outputs());
    files.extend(scenarios_compare::outputs());
    files.extend(scenarios_ecmp::outputs());
    files.extend(scenarios_nccl::outputs());
    files
}

fn usage() -> ExitCode {
    eprintln!("usage: rocescope-samplegen [--check] [DIR]\n       rocescope-samplegen --bulk FILE [--packets N] [--qps N] [--payload BYTES] [--snap BYTES] [--msg-pkts N] [--bad-icrc] [--no-acks] [--pause-hosts N] [--pause-quanta N] [--pause-receivers] [--one-sender] [--back-every N] [--points N] [--mixed] [--fold-breakers]");
    ExitCode::from(2)
}

fn bulk_main(args: &[String]) -> ExitCode {
    let mut b = bulk::Bulk {
        packets: 1_000_000,
        qps: 1000,
        payload: 1024,
        snap: 65535,
        msg_pkts: 4,
        bad_icrc: false,
        no_acks: false,
        pause_hosts: 0,
        points: 0,
        mixed: false,
        fold_breakers: false,
        pause_quanta: 1000,
        pause_receivers: false,
        one_sender: false,
        back_every: 0,
    };
    let Some(path) = args.first() else { return usage() };
    let mut it = args.iter().skip(1);
    while let Some(flag) = it.next() {
        let switches =
            ["--bad-icrc", "--no-acks", "--mixed", "--pause-receivers", "--one-sender", "--fold-breakers"];
        if switches.contains(&flag.as_str()) {
            b.bad_icrc |= flag == "--bad-icrc";
            b.no_acks |= flag == "--no-acks";
            b.mixed |= flag == "--mixed";
            b.pause_receivers |= flag == "--pause-receivers";
            b.one_sender |= flag == "--one-sender";
            b.fold_breakers |= flag == "--fold-breakers";
            continue;
        }
        let Some(v) = it.next() else { return usage() };
        let ok = match flag.as_str() {
            "--packets" => v.parse().map(|x| b.packets = x).is_ok(),
            "--qps" => v.parse().map(|x| b.qps = x).is_ok(),
            "--payload" => v.parse().map(|x| b.payload = x).is_ok(),
            "--snap" => v.parse().map(|x| b.snap = x).is_ok(),
            "--msg-pkts" => v.parse().map(|x| b.msg_pkts = x).is_ok(),
            "--pause-hosts" => v.parse().map(|x| b.pause_hosts = x).is_ok(),
            "--pause-quanta" => v.parse().map(|x| b.pause_quanta = x).is_ok(),
            "--back-every" => v.parse().map(|x| b.back_every = x).is_ok(),
            "--points" => v.parse().map(|x| b.points = x).is_ok(),
            _ => false,
        };
        if !ok {
            return usage();
        }
    }
    match bulk::write(Path::new(path), &b) {
        Ok(n) => {
            println!("wrote {n} frames over {} QPs to {path}", b.qps);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocescope-samplegen: {path}: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--bulk") {
        return bulk_main(args.get(1..).unwrap_or(&[]));
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        usage();
        return ExitCode::SUCCESS;
    }
    let (check, dir) = match args.as_slice() {
        [] => (false, PathBuf::from("samples")),
        // An unknown option is not a directory to write into.
        [d] | [_, d] if d.starts_with('-') => return usage(),
        [d] if d != "--check" => (false, PathBuf::from(d)),
        [c, d] if c == "--check" => (true, PathBuf::from(d)),
        _ => return usage(),
    };
    let mut stale = 0;
    for (name, bytes) in outputs() {
        let path: PathBuf = Path::new(&dir).join(&name);
        if check {
            if std::fs::read(&path).ok().as_deref() != Some(&bytes[..]) {
                eprintln!("{} is out of date: run `cargo run -p rocescope-samplegen`", path.display());
                stale += 1;
            }
        } else if let Err(e) = std::fs::create_dir_all(path.parent().unwrap_or(&dir))
            .and_then(|()| std::fs::write(&path, &bytes))
        {
            eprintln!("rocescope-samplegen: {}: {e}", path.display());
            return ExitCode::from(1);
        } else {
            println!("wrote {}", path.display());
        }
    }
    if stale > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
