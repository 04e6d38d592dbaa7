//! The baseline for the report benchmark: a bare libpcap read loop over a capture file
//! (`pcap_next_ex` through the `pcap` crate), counting frames and bytes.
//!
//! `cargo run --release -p rocescope-capture --example pcap_read_loop -- FILE`

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: pcap_read_loop FILE");
        std::process::exit(2);
    };
    let mut cap = match pcap::Capture::from_file(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let (mut frames, mut bytes) = (0u64, 0u64);
    let start = std::time::Instant::now();
    while let Ok(p) = cap.next_packet() {
        frames += 1;
        bytes += u64::from(p.header.caplen);
    }
    let s = start.elapsed().as_secs_f64();
    println!("{frames} frames, {bytes} bytes in {s:.3} s: {:.2} M frames/s", frames as f64 / s / 1e6);
}
