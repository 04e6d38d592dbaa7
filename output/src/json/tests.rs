//! Both writers: the expected bytes of a few documents, and the fast writer against the
//! reference ([`legacy`]) on generated documents that reach every rule (time keys and
//! their twins, escapes in keys and values, unsafe characters, numbers, variants).

use super::*;
use proptest::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// The document through both writers: the same bytes, which are returned.
fn both<T: Serialize + ?Sized>(value: &T) -> String {
    let fast = to_vec(value).unwrap();
    let reference = legacy::to_vec(value).unwrap();
    assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&reference));
    // And through a writer that flushes as it goes.
    let mut streamed = Vec::new();
    to_writer(&mut streamed, value).unwrap();
    assert_eq!(streamed, fast);
    String::from_utf8(fast).unwrap()
}

#[derive(Serialize)]
struct Inner {
    ts_ns: i64,
    what: &'static str,
    quanta: [u16; 2],
}

#[derive(Serialize)]
struct Doc {
    start_ns: Option<i64>,
    end_ns: Option<i64>,
    paused_ns: i64,
    first_ns: u64,
    evidence: Vec<Inner>,
    last_ns: i64,
}

#[test]
fn every_time_key_gets_an_exact_twin() {
    let d = Doc {
        start_ns: Some(1_767_225_600_069_102_700),
        end_ns: None,
        paused_ns: 9_024_000,
        first_ns: 5,
        evidence: vec![Inner { ts_ns: -1, what: "x", quanta: [1, 2] }],
        last_ns: 1_767_225_600_000_000_001,
    };
    let s = both(&d);
    assert_eq!(
        s,
        r#"{"start_ns":1767225600069102700,"start":"1767225600.069102700","end_ns":null,"end":null,"paused_ns":9024000,"first_ns":5,"first":"0.000000005","evidence":[{"ts_ns":-1,"ts":"-0.000000001","what":"x","quanta":[1,2]}],"last_ns":1767225600000000001,"last":"1767225600.000000001"}"#
    );
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["start"], "1767225600.069102700");
    assert_eq!(epoch_secs(i64::MIN), "-9223372036.854775808");
    assert_eq!(
        both(&BTreeMap::from([("ts_ns", i64::MIN)])),
        format!(r#"{{"ts_ns":{},"ts":"-9223372036.854775808"}}"#, i64::MIN)
    );
}

#[test]
fn strings_are_made_terminal_safe_on_the_way() {
    let doc = serde_json::json!({"points": ["a\x1b\u{9b}b", "\u{202e}c\u{7f}", "é"], "n": 1});
    let text = both(&doc);
    assert_eq!(text, r#"{"n":1,"points":["a\u001b\u009bb","\u202ec\u007f","é"]}"#);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), doc);
}

/// Time keys only twin an `i64`, a `u64` (null above `i64::MAX`), a null or a float that is
/// not finite, directly under them: not a narrower integer, a string, a float, nor
/// anything inside an object or array.
#[test]
fn twins_follow_the_reference_for_every_kind_of_value() {
    #[derive(Serialize)]
    enum E {
        Unit,
        New(i64),
        Tuple(i64, u8),
        Struct { ts_ns: i64 },
    }
    #[derive(Serialize)]
    struct Kinds {
        ts_ns: u32,
        start_ns: &'static str,
        end_ns: f64,
        first_ns: f64,
        last_ns: u64,
        #[serde(rename = "ts_ns")]
        again: Vec<i64>,
        #[serde(rename = "start_ns")]
        unit: E,
        #[serde(rename = "end_ns")]
        newtype: E,
        #[serde(rename = "first_ns")]
        tuple: E,
        #[serde(rename = "last_ns")]
        strukt: E,
        #[serde(rename = "ts_ns")]
        bytes: serde_bytes_like::Bytes,
        #[serde(rename = "ts_ns")]
        nested: Option<Option<i64>>,
        #[serde(rename = "\"ts_ns\n")]
        escaped: i64,
        #[serde(rename = "a\"ts_ns")]
        not_a_time: i64,
    }
    let k = Kinds {
        ts_ns: 7,
        start_ns: "x",
        end_ns: 1.5,
        first_ns: f64::NAN,
        last_ns: u64::MAX,
        again: vec![1],
        unit: E::Unit,
        newtype: E::New(3),
        tuple: E::Tuple(4, 5),
        strukt: E::Struct { ts_ns: 6 },
        bytes: serde_bytes_like::Bytes(vec![1, 2]),
        nested: Some(Some(8)),
        escaped: 9,
        not_a_time: 10,
    };
    let s = both(&k);
    assert!(s.contains(r#""first_ns":null,"first":null"#), "{s}");
    assert!(s.contains(r#""last_ns":18446744073709551615,"last":null"#), "{s}");
    assert!(s.contains(r#""\"ts_ns\n":9,"ts":"0.000000009""#), "{s}");
    assert!(s.ends_with(r#""a\"ts_ns":10}"#), "{s}");
    // Variants named like time keys, and map keys of every kind.
    #[derive(Serialize)]
    #[allow(non_camel_case_types)]
    enum V {
        ts_ns(i64),
        last_ns { x: u8 },
    }
    both(&vec![V::ts_ns(1), V::last_ns { x: 2 }]);
    both(&BTreeMap::from([(1u8, 1), (2, 2)]));
    both(&BTreeMap::from([(true, "a")]));
    both(&BTreeMap::from([('c', ())]));
    both(&BTreeMap::from([(-5i64, None::<i64>)]));
    both(&BTreeMap::<String, i64>::new());
    both(&Vec::<i64>::new());
    both(&(1u128, -1i128, 'x', 0.1f32, 1e300f64, -0.0f64, (), f32::INFINITY));
    // A key written in pieces (collect_str): two runs are no time key.
    struct Pieces;
    impl std::fmt::Display for Pieces {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("ts")?;
            f.write_str("_ns")
        }
    }
    struct KeyOf(Pieces);
    impl Serialize for KeyOf {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(&self.0)
        }
    }
    let s = both(&vec![(KeyOf(Pieces), 5i64)].into_iter().collect::<MapOf<_, _>>());
    assert_eq!(s, r#"{"ts_ns":5}"#);
    assert_eq!(both(&serde_json::json!({"ts_ns": 5})), r#"{"ts_ns":5,"ts":"0.000000005"}"#);
}

/// A map from a list of entries (keys that are not `Ord`).
struct MapOf<K, V>(Vec<(K, V)>);

impl<K, V> FromIterator<(K, V)> for MapOf<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(it: I) -> Self {
        MapOf(it.into_iter().collect())
    }
}

impl<K: Serialize, V: Serialize> Serialize for MapOf<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// Bytes written as bytes (`serialize_bytes`), as `serde_bytes` would.
mod serde_bytes_like {
    pub struct Bytes(pub Vec<u8>);
    impl serde::Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&self.0)
        }
    }
}

/// Keys and strings with the characters that matter: the time keys' names, escapes, unsafe
/// characters, other non-ASCII text.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("ts_ns".to_string()),
        Just("last_ns".to_string()),
        Just("bin_ns".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\n".to_string()),
        Just("\u{1b}".to_string()),
        Just("\u{7f}".to_string()),
        Just("\u{9b}".to_string()),
        Just("\u{202e}".to_string()),
        Just("\u{2066}".to_string()),
        Just("é€😀".to_string()),
        "[a-z_ ]{0,12}",
    ];
    proptest::collection::vec(piece, 0..4).prop_map(|v| v.concat())
}

fn value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((text(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_fast_writer_writes_the_reference_bytes(doc in value()) {
        both(&doc);
    }

    #[test]
    fn struct_keys_of_any_text_write_the_reference_bytes(key in text(), n in any::<i64>(), s in text()) {
        // A map key and a value of any text, beside a struct's own keys.
        let mut m = BTreeMap::new();
        m.insert(key.clone(), serde_json::json!([n, s, null]));
        m.insert(format!("{key}_ns"), serde_json::Value::from(n));
        both(&(Doc { start_ns: Some(n), end_ns: None, paused_ns: n, first_ns: n.unsigned_abs(), evidence: vec![], last_ns: n }, m));
    }
}
