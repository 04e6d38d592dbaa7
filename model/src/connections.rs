//! Connections: the two flows of a QP paired (the report's `connections`).

use serde::{Deserialize, Serialize};

/// One of a few fixed words of the report (a connection's health and pairing), held in one
/// byte: reads and prints as its text, is written as a JSON string. Two `&'static str`
/// took 32 bytes of every connection (issue 13).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Word(u8);

impl Word {
    const WORDS: [&'static str; 9] =
        ["ok", "info", "warning", "critical", "none", "cm", "psn", "address", "port"];

    /// The word for `text` when it is one of the report's fixed words ("ok", "info",
    /// "warning", "critical", "none", "cm", "psn", "address", "port"); else "none".
    pub fn new(text: &str) -> Word {
        Word(Self::WORDS.iter().position(|w| *w == text).map_or(4, |i| i as u8))
    }

    /// Its text.
    pub fn as_str(self) -> &'static str {
        Self::WORDS.get(usize::from(self.0)).copied().unwrap_or("none")
    }
}

/// The order of a health word (a connection's or a flow's) in worst-first lists: critical,
/// warning, info, then the rest (`ok`, or a word this version does not know).
pub fn health_rank(health: &str) -> u8 {
    match health {
        "critical" => 0,
        "warning" => 1,
        "info" => 2,
        _ => 3,
    }
}

impl std::ops::Deref for Word {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Word {
    /// Padded as a `str` is (`{:<8}`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl PartialEq<&str> for Word {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Word {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// From its text; a text that is none of the words is an error (not read as "none": the
/// document would not be written back as it was).
impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        match Self::WORDS.iter().position(|w| *w == text) {
            Some(i) => Ok(Word(i as u8)),
            None => Err(serde::de::Error::unknown_variant(&text, &Self::WORDS)),
        }
    }
}

/// A connection's flow indices, one or two, held inline (a `Vec` per connection was one
/// allocation each: 3 MB at 100k connections, issue 13). Reads as a slice; written as a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnFlows {
    ids: [usize; 2],
    len: u8,
}

impl ConnFlows {
    /// A flow whose other direction was not seen.
    pub fn one(a: usize) -> Self {
        ConnFlows { ids: [a, a], len: 1 }
    }

    /// Both directions: `a` to `b`'s flow, then its reverse.
    pub fn two(a: usize, b: usize) -> Self {
        ConnFlows { ids: [a, b], len: 2 }
    }
}

impl std::ops::Deref for ConnFlows {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        self.ids.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl<'a> IntoIterator for &'a ConnFlows {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for ConnFlows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// From a list of one or two flow indices.
impl<'de> Deserialize<'de> for ConnFlows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Vec::<usize>::deserialize(d)?.as_slice() {
            [a] => Ok(ConnFlows::one(*a)),
            [a, b] => Ok(ConnFlows::two(*a, *b)),
            more => Err(serde::de::Error::invalid_length(more.len(), &"one or two flow indices")),
        }
    }
}

/// Two directions of one QP connection (or one direction whose partner was not seen).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Connection {
    /// Capture point (index into `Report::points`).
    pub point: u16,
    /// One end (written as text, "10.0.0.1"; held as an address, with no allocation: a
    /// report of 100k connections held 6 MB of address strings).
    pub a: std::net::IpAddr,
    /// The other.
    pub b: std::net::IpAddr,
    /// QP of `a` (the destination QP of the b-to-a flow), when known.
    pub a_qpn: Option<u32>,
    /// QP of `b`.
    pub b_qpn: u32,
    /// Flow indices: a-to-b, then b-to-a when paired.
    pub flows: ConnFlows,
    /// `cm`, `psn`, `address` or `none`.
    pub pairing: Word,
    /// Packets both ways.
    pub packets: u64,
    /// Wire bytes both ways.
    pub bytes: u64,
    /// Worst finding on its flows: `critical`, `warning`, `info` or `ok`.
    pub health: Word,
}

#[cfg(test)]
mod word_tests {
    use super::Word;

    #[test]
    fn words_read_print_and_serialise_as_their_text() {
        for w in ["ok", "info", "warning", "critical", "none", "cm", "psn", "address"] {
            assert_eq!(Word::new(w).as_str(), w);
            assert_eq!(Word::new(w), w);
            assert_eq!(serde_json::to_string(&Word::new(w)).unwrap(), format!("\"{w}\""));
        }
        assert_eq!(Word::new("other"), "none");
        for w in ["ok", "critical", "cm", "port"] {
            let back: Word = serde_json::from_str(&format!("\"{w}\"")).unwrap();
            assert_eq!(back, w);
        }
        assert!(serde_json::from_str::<Word>("\"other\"").is_err(), "an unknown word is no word");
        assert_eq!(format!("[{:<8}]", Word::new("cm")), "[cm      ]");
    }

    #[test]
    fn flow_lists_read_back() {
        use super::ConnFlows;
        for c in [ConnFlows::one(3), ConnFlows::two(4, 9)] {
            let text = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<ConnFlows>(&text).unwrap(), c, "{text}");
        }
        assert!(serde_json::from_str::<ConnFlows>("[]").is_err());
        assert!(serde_json::from_str::<ConnFlows>("[1,2,3]").is_err());
    }
}
