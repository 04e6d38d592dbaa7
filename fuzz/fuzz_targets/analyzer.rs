//! Fuzz the analysis: the input becomes a sequence of frames (a small length-prefixed
//! format, timestamps from the bytes), each decoded and fed to the analyzer; then the report
//! is built and serialised to JSON, as `rocescope report --json` does. Any panic is a bug.
//!
//! Format: one options byte, then frames, each
//! `len: u16 LE | dt: i32 LE | flags: u8 | len bytes of frame`, where the time advances by
//! `dt` times 1, 1 000, 1 000 000 or 1 000 000 000 ns (flags bits 0-1, so it can jump or go
//! back), the capture point is flags bit 2, and bits 3-7 add that many bytes to the wire
//! length (a frame cut short by the snap length). `fuzz/seed.sh` turns the samples into
//! this format.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_decoder::{decode, DecodeOptions, LinkType, OpcodeOptions};

const LINK_TYPES: [u32; 4] = [1, 113, 276, 101];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, mut rest)) = data.split_first() else { return };
    let opts = DecodeOptions {
        roce_port: 4791,
        opcode: OpcodeOptions { dc: sel & 0x01 != 0 },
        check_icrc: sel & 0x02 == 0,
        ..DecodeOptions::default()
    };
    let lt = LinkType(LINK_TYPES[usize::from((sel >> 2) & 3)]);
    let mut cfg = Config { opcode: opts.opcode, ..Config::default() };
    if sel & 0x10 != 0 {
        cfg.points = vec!["a".into(), "b".into()];
    }
    if sel & 0x20 != 0 {
        cfg.audit.roce_dscp = Some(vec![26]);
        cfg.audit.cnp_dscp = Some(vec![48]);
        cfg.audit.roce_pcp = Some(3);
        cfg.audit.lossless_priorities = Some(vec![3]);
        cfg.audit.ecn_capable = true;
        if cfg.audit.normalize().is_err() {
            return;
        }
    }
    if sel & 0x40 != 0 {
        cfg.findings_per_kind = 1;
        cfg.link_speed_bps = 1_000_000_000;
        cfg.pfc.storm_window_ns = 1_000_000;
    }
    let mut analyzer = Analyzer::new(cfg);
    let mut ts: i64 = 1_700_000_000_000_000_000;
    let mut number = 0u64;
    while let Some((head, tail)) = rest.split_first_chunk::<7>() {
        let len = usize::from(u16::from_le_bytes([head[0], head[1]]));
        let dt = i64::from(i32::from_le_bytes([head[2], head[3], head[4], head[5]]));
        let flags = head[6];
        let scale = [1, 1_000, 1_000_000, 1_000_000_000][usize::from(flags & 3)];
        ts = ts.saturating_add(dt.saturating_mul(scale));
        let frame = &tail[..len.min(tail.len())];
        rest = &tail[frame.len()..];
        number += 1;
        let meta = FrameMeta {
            number,
            ts_ns: ts,
            len: frame.len() as u32 + u32::from(flags >> 3),
            link_bps: None,
            point: u16::from(flags >> 2 & 1),
        };
        let p = decode(lt, frame, &opts);
        analyzer.push(&meta, &p);
        // Now and then a report mid-stream, as the TUI and the exporter build them.
        if number % 64 == 0 {
            let _ = serde_json::to_vec(&analyzer.report_counters());
            if sel & 0x80 != 0 {
                let _ = analyzer.evict_idle(ts.saturating_sub(1_000_000));
            }
        }
    }
    analyzer.finish();
    let report = analyzer.report();
    let _ = serde_json::to_vec(&report);
    let _ = analyzer.points();
});
