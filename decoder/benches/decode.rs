//! Decoder throughput over the bundled demo capture (every frame kind rocescope knows),
//! with and without the ICRC check. `cargo bench -p rocescope-decoder`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocescope_decoder::{decode, DecodeOptions, LinkType};

/// The frames of a little-endian classic pcap.
fn frames(path: &str) -> Vec<Vec<u8>> {
    let d = std::fs::read(path).expect("read sample");
    let mut out = Vec::new();
    let mut off = 24;
    while off + 16 <= d.len() {
        let caplen = u32::from_le_bytes(d[off + 8..off + 12].try_into().unwrap()) as usize;
        out.push(d[off + 16..off + 16 + caplen].to_vec());
        off += 16 + caplen;
    }
    out
}

fn bench(c: &mut Criterion) {
    let all = frames(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    // Header-only view, as a 128-byte snap capture would give.
    let heads: Vec<Vec<u8>> = all.iter().map(|f| f[..f.len().min(128)].to_vec()).collect();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(all.len() as u64));
    for (name, set, check) in
        [("demo/icrc", &all, true), ("demo/no-icrc", &all, false), ("demo/128B-snap", &heads, true)]
    {
        let opts = DecodeOptions { check_icrc: check, ..DecodeOptions::default() };
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut roce = 0u32;
                for f in set.iter() {
                    roce +=
                        u32::from(decode(LinkType::ETHERNET, std::hint::black_box(f), &opts).roce.is_some());
                }
                roce
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
