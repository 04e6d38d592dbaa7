//! One UI frame over 10,000 connections: sorting/filtering the QP rows and drawing the
//! screen (160x45, ratatui's TestBackend), the work the UI does on every snapshot and key.
//! `cargo bench -p rocescope-tui`. Target: well under 10 ms per frame.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_decoder::{decode, DecodeOptions, LinkType};
use rocescope_tui::keys::Action;
use rocescope_tui::view::{self, TreeFn};
use rocescope_tui::{App, FrameLine, Snapshot};

/// The first RoCEv2 frame of a classic pcap (Ethernet, IPv4, UDP, BTH at offset 42).
fn first_frame(path: &str) -> Vec<u8> {
    let d = std::fs::read(path).expect("read sample");
    let caplen = u32::from_le_bytes(d[24 + 8..24 + 12].try_into().unwrap()) as usize;
    d[40..40 + caplen].to_vec()
}

/// A report with `n` connections: the sample frame with a different source address and
/// destination QP each time.
fn analyzer(n: u32) -> Analyzer {
    let base = first_frame(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/rc-normal.pcap"));
    let opts = DecodeOptions { check_icrc: false, ..DecodeOptions::default() };
    let mut a = Analyzer::new(Config::default());
    for i in 0..n {
        for k in 0..4u32 {
            let mut f = base.clone();
            f[26..30].copy_from_slice(&(0x0a00_0000 + i).to_be_bytes()); // IPv4 source
            f[47..50].copy_from_slice(&(i + 1).to_be_bytes()[1..]); // BTH destination QP
            f[51..54].copy_from_slice(&(k * (1 + i % 3)).to_be_bytes()[1..]); // PSN, gaps on some
            let p = decode(LinkType::ETHERNET, &f, &opts);
            let number = a.totals().packets + 1;
            a.push(
                &FrameMeta {
                    number,
                    ts_ns: i64::from(i * 4 + k) * 1000,
                    len: f.len() as u32,
                    link_bps: None,
                    point: 0,
                },
                &p,
            );
        }
    }
    a
}

fn snapshot(n: u32) -> Snapshot {
    let mut s = Snapshot::empty(analyzer(n).report(), "bench", true);
    s.frames = (0..5000)
        .map(|i| FrameLine { number: i, summary: format!("frame {i}"), ..FrameLine::default() })
        .collect();
    s
}

fn bench(c: &mut Criterion) {
    // The worker builds a report for every snapshot (4 a second): its cost is taken from
    // the capture thread.
    let a = analyzer(10_000);
    c.bench_function("worker/report-10k-flows", |b| b.iter(|| a.report()));
    let snap = snapshot(10_000);
    assert!(snap.report.connections.len() >= 10_000, "{} connections", snap.report.connections.len());
    let tree = |l: &FrameLine| format!("{}", l.number);
    let t: TreeFn<'_> = &tree;
    let mut term = Terminal::new(TestBackend::new(160, 45)).unwrap();
    let mut g = c.benchmark_group("render");
    for (name, actions) in [
        ("qps-10k", vec![]),
        ("qps-10k-sorted-by-ce", vec![Action::SortNext; 7]),
        ("packets-5k", vec![Action::Screen(2)]),
        ("findings", vec![Action::Screen(5)]),
        ("congestion-10k", vec![Action::Screen(6)]),
    ] {
        let mut app = App::default();
        app.update(snap.clone());
        for a in actions {
            app.act(a);
        }
        g.bench_function(name, |b| b.iter(|| term.draw(|f| view::draw(f, &mut app, t)).map(|_| ())));
    }
    // A new snapshot arrives (4 times a second): the rows are rebuilt and sorted once.
    let mut app = App::default();
    g.bench_function("qps-10k-new-snapshot", |b| {
        b.iter_batched(
            || snap.clone(),
            |s| {
                app.update(s);
                term.draw(|f| view::draw(f, &mut app, t)).map(|_| ())
            },
            criterion::BatchSize::LargeInput,
        )
    });
    // The same on the Congestion screen: the QPs ranked once for the new snapshot.
    let mut app = App::default();
    app.act(Action::Screen(6));
    g.bench_function("congestion-10k-new-snapshot", |b| {
        b.iter_batched(
            || snap.clone(),
            |s| {
                app.update(s);
                term.draw(|f| view::draw(f, &mut app, t)).map(|_| ())
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
