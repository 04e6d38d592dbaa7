//! The sFlow parser and the frame walker never panic, whatever the bytes: random datagrams,
//! valid ones cut anywhere, and valid ones with any word replaced by any value.

use proptest::prelude::*;
use rocescope_decoder::sflow::parse;

/// A valid datagram: agent 10.0.0.100, one flow sample (format 1) with one raw header.
fn valid() -> Vec<u8> {
    let w = |ws: &[u32]| ws.iter().flat_map(|w| w.to_be_bytes()).collect::<Vec<u8>>();
    let mut rec = w(&[1, 1082, 4, 8]);
    rec.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let mut body = w(&[1, 3, 4, 40, 0, 3, 0, 1, 1, rec.len() as u32]);
    body.extend(rec);
    let mut d = w(&[5, 1, 0x0A00_0064, 0, 1, 100, 1, 1, body.len() as u32]);
    d.extend(body);
    d
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = parse(&data);
    }

    #[test]
    fn valid_datagrams_damaged(cut in 0usize..200, word in 0usize..40, value in any::<u32>()) {
        let mut d = valid();
        prop_assert!(parse(&d).is_ok());
        let at = (word * 4).min(d.len().saturating_sub(4));
        d[at..at + 4].copy_from_slice(&value.to_be_bytes());
        if let Ok(dg) = parse(&d) {
            // Whatever parses stays inside the datagram.
            for s in &dg.samples {
                for h in &s.headers {
                    prop_assert!(h.header.len() <= d.len());
                }
            }
        }
        let n = cut.min(d.len());
        if n < d.len() {
            let e = parse(&d[..n]);
            if let Err(e) = e {
                prop_assert!(e.offset <= n);
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }
}
