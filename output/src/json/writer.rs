//! The fast writer: a serde [`Serializer`](serde::Serializer) that writes what
//! `serde_json`'s compact serializer with [`super::ExactFormatter`] writes, byte for byte,
//! at a fraction of the cost.
//!
//! Where the cost went, and what this does instead:
//! - Keys: serde_json escapes every key byte by byte, and the formatter scanned it again (the
//!   time-key watch, the unsafe-character scan): 57% of the work. A struct's key is a
//!   `&'static str`, encoded once (`super::keys`: `"packets":` looked up by the key's
//!   address) and copied whole after its comma, with its time-key index.
//! - Output: every piece went through `io::Write::write_all` on a `BufWriter`; here pieces
//!   go into one `Vec` (a capacity check and a copy), handed to the writer in large writes.
//! - Strings: one word-at-a-time check that nothing needs escaping, then one copy.
//! - Numbers: `itoa` (a one-digit number, the most common, without it); floats through
//!   serde_json's own `CompactFormatter`, so they are its digits whatever its float library.
//! - Time twins: the seconds string written digit by digit, not through `format!`.

use super::escape::{self, KeyRuns};
use super::keys::Keys;
use super::TIME_KEYS;
use serde::ser::{self, Impossible, Serialize};
use serde_json::ser::{CompactFormatter, Formatter};
use std::fmt::Display;
use std::io::{self, Write};

type Error = serde_json::Error;
type Result<T> = std::result::Result<T, Error>;

/// The buffer is handed to the output once it holds this much.
const FLUSH_AT: usize = 1 << 16;

/// Writes a serialisable value as compact JSON with time twins and terminal-safe strings
/// (the module's rules, [`super`]) into `W`, buffered: [`Writer::finish`] writes the rest.
///
/// ```
/// use serde::Serialize;
/// let mut w = rocescope_output::json::Writer::new(Vec::new());
/// std::collections::BTreeMap::from([("ts_ns", 1_500_000_000i64)]).serialize(&mut w).unwrap();
/// let out = w.finish().unwrap();
/// assert_eq!(out, br#"{"ts_ns":1500000000,"ts":"1.500000000"}"#);
/// ```
pub struct Writer<W> {
    out: W,
    buf: Vec<u8>,
    /// Flush when the buffer holds this much (never, for a document kept in memory).
    flush_at: usize,
    /// The value being written is directly under a time key (no object or array opened
    /// since): a scalar written now gets a twin.
    time_value: bool,
    /// The twin to write when the time key's value ends: `Some(None)` for a null time.
    twin: Option<Option<i64>>,
    /// Struct keys, encoded once.
    keys: Keys,
}

impl<W: Write> Writer<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> Self {
        Writer {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            flush_at: FLUSH_AT,
            time_value: false,
            twin: None,
            keys: Keys::new(),
        }
    }

    /// Write what is still buffered; the output back.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(self.out)
    }

    #[inline(always)]
    pub(super) fn maybe_flush(&mut self) -> Result<()> {
        if self.buf.len() >= self.flush_at {
            self.out.write_all(&self.buf).map_err(Error::io)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl Writer<io::Sink> {
    /// A writer that keeps the whole document in memory ([`Writer::into_buffer`]).
    pub fn in_memory() -> Self {
        Writer {
            out: io::sink(),
            buf: Vec::with_capacity(256),
            flush_at: usize::MAX,
            time_value: false,
            twin: None,
            keys: Keys::new(),
        }
    }

    /// The document written.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// What was written so far, leaving the writer empty for more (and its keys encoded).
    pub(super) fn take_buffer(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

impl<W> Writer<W> {
    #[inline(always)]
    pub(super) fn int<I: itoa::Integer>(&mut self, v: I) {
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(v).as_bytes());
    }

    /// Bytes as they are (JSON text).
    #[inline(always)]
    pub(super) fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Take back the last byte written (an object's `}`, to add entries to it).
    pub(super) fn unclose(&mut self) {
        self.buf.pop();
    }

    /// `true` or `false`.
    #[inline(always)]
    pub(super) fn boolean(&mut self, v: bool) {
        // Five bytes either way (no copy of a length known only here), cut back.
        let at = self.buf.len();
        self.buf.extend_from_slice(if v { b"true " } else { b"false" });
        self.buf.truncate(at + if v { 4 } else { 5 });
    }

    /// A float, or `null` when it is not finite (as serde_json writes them).
    #[inline]
    pub(super) fn float_or_null(&mut self, v: f64) -> Result<()> {
        if v.is_finite() {
            self.float(v, None)
        } else {
            self.buf.extend_from_slice(b"null");
            Ok(())
        }
    }

    /// An unsigned integer; one digit (most counters of a report are 0) without `itoa`.
    #[inline(always)]
    pub(super) fn uint(&mut self, v: u64) {
        if v < 10 {
            self.buf.push(b'0' + v as u8);
        } else {
            self.int(v);
        }
    }

    /// A scalar that gets a twin when it is a time key's value.
    #[inline(always)]
    fn time_scalar(&mut self, v: Option<i64>) {
        if self.time_value {
            self.twin = Some(v);
        }
    }

    /// An object or an array begins: what follows is not a time key's scalar.
    #[inline]
    fn open(&mut self, bracket: u8) {
        self.time_value = false;
        self.buf.push(bracket);
    }

    #[inline]
    pub(super) fn string(&mut self, s: &str) {
        self.buf.push(b'"');
        if escape::plain(s.as_bytes()) {
            self.buf.extend_from_slice(s.as_bytes());
        } else {
            escape::push_escaped(&mut self.buf, s, None);
        }
        self.buf.push(b'"');
    }

    /// `,"key":` (no comma for the first key) for a struct's key (or a variant's name): its
    /// time key index, when it is one.
    #[inline]
    fn static_key(&mut self, key: &'static str, first: bool) -> Option<u8> {
        if !first {
            self.buf.push(b',');
        }
        self.keys.write(&mut self.buf, key)
    }

    /// The value of a key (`time`: the key's index in [`TIME_KEYS`] when it is a time key),
    /// then its twin.
    #[inline]
    fn entry_value<T: ?Sized + Serialize>(&mut self, time: Option<u8>, value: &T) -> Result<()>
    where
        W: Write,
    {
        match time {
            None => value.serialize(&mut *self),
            Some(key) => {
                self.time_value = true;
                let r = value.serialize(&mut *self);
                self.time_value = false;
                r?;
                if let Some(twin) = self.twin.take() {
                    self.write_twin(key, twin);
                }
                Ok(())
            }
        }
    }

    /// After an entry whose key was not known as a key (a variant's array or object): the
    /// twin a scalar left, if any (none can: opening the value cleared the watch).
    fn end_value(&mut self, time: Option<u8>) {
        self.time_value = false;
        if let (Some(twin), Some(key)) = (self.twin.take(), time) {
            self.write_twin(key, twin);
        }
    }

    /// `,"ts":"1767225600.069102700"` after `ts_ns` (or `null`).
    fn write_twin(&mut self, key: u8, twin: Option<i64>) {
        let name = TIME_KEYS
            .get(usize::from(key))
            .and_then(|k| k.get(..k.len().saturating_sub(3)))
            .unwrap_or_default();
        self.twin_named(name, twin);
    }

    fn twin_named(&mut self, name: &[u8], twin: Option<i64>) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(name);
        self.buf.extend_from_slice(b"\":");
        match twin {
            Some(ns) => {
                self.buf.push(b'"');
                self.epoch_secs(ns);
                self.buf.push(b'"');
            }
            None => self.buf.extend_from_slice(b"null"),
        }
    }

    /// [`super::epoch_secs`], written into the buffer.
    pub(super) fn epoch_secs(&mut self, ns: i64) {
        if ns < 0 {
            self.buf.push(b'-');
        }
        let a = ns.unsigned_abs();
        self.int(a / 1_000_000_000);
        self.buf.push(b'.');
        let mut frac = a % 1_000_000_000;
        let mut digits = [b'0'; 9];
        for d in digits.iter_mut().rev() {
            *d = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
        self.buf.extend_from_slice(&digits);
    }

    /// A float as serde_json writes it (its formatter's digits).
    fn float(&mut self, v: f64, single: Option<f32>) -> Result<()> {
        match single {
            Some(f) => CompactFormatter.write_f32(&mut self.buf, f),
            None => CompactFormatter.write_f64(&mut self.buf, v),
        }
        .map_err(Error::io)
    }
}

/// Where an object or array is: serde_json's states (an empty one is closed at once).
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Empty,
    First,
    Rest,
}

/// An object or array being written.
pub struct Compound<'a, W> {
    w: &'a mut Writer<W>,
    state: State,
    /// An object's key in waiting (a map's key before its value), or a variant's name:
    /// its time key index.
    time: Option<u8>,
}

impl<W: Write> Compound<'_, W> {
    /// A struct's field whose value `write` writes (by hand, not through serde).
    pub(super) fn field_with(
        &mut self,
        key: &'static str,
        write: impl FnOnce(&mut Writer<W>) -> Result<()>,
    ) -> Result<()> {
        self.w.maybe_flush()?;
        let first = self.next();
        // Not a time key's value: no twin to write after it.
        let _ = self.w.static_key(key, first);
        write(self.w)
    }
}

impl<W> Compound<'_, W> {
    /// Before an element or an entry: its comma.
    #[inline(always)]
    fn next(&mut self) -> bool {
        let first = self.state == State::First;
        self.state = State::Rest;
        first
    }
}

impl<'a, W: Write> ser::Serializer for &'a mut Writer<W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, W>;
    type SerializeTuple = Compound<'a, W>;
    type SerializeTupleStruct = Compound<'a, W>;
    type SerializeTupleVariant = Compound<'a, W>;
    type SerializeMap = Compound<'a, W>;
    type SerializeStruct = Compound<'a, W>;
    type SerializeStructVariant = Compound<'a, W>;

    #[inline(always)]
    fn serialize_bool(self, v: bool) -> Result<()> {
        self.boolean(v);
        Ok(())
    }

    #[inline]
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.int(v);
        Ok(())
    }

    #[inline]
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.int(v);
        Ok(())
    }

    #[inline]
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.int(v);
        Ok(())
    }

    #[inline(always)]
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.time_scalar(Some(v));
        self.int(v);
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.int(v);
        Ok(())
    }

    #[inline(always)]
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.uint(u64::from(v));
        Ok(())
    }

    #[inline(always)]
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.uint(u64::from(v));
        Ok(())
    }

    #[inline(always)]
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.uint(u64::from(v));
        Ok(())
    }

    #[inline(always)]
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.time_scalar(i64::try_from(v).ok());
        self.uint(v);
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        self.int(v);
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        if v.is_finite() {
            self.float(f64::from(v), Some(v))
        } else {
            self.serialize_unit()
        }
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        if v.is_finite() {
            self.float(v, None)
        } else {
            self.serialize_unit()
        }
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.string(v.encode_utf8(&mut [0u8; 4]));
        Ok(())
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        self.string(v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.open(b'[');
        for (i, b) in v.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.int(*b);
        }
        self.buf.push(b']');
        Ok(())
    }

    #[inline]
    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }

    #[inline]
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_unit(self) -> Result<()> {
        self.time_scalar(None);
        self.buf.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    #[inline]
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<()> {
        self.string(variant);
        Ok(())
    }

    #[inline]
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.open(b'{');
        let time = self.static_key(variant, true);
        self.entry_value(time, value)?;
        self.buf.push(b'}');
        Ok(())
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, W>> {
        self.open(b'[');
        let state = if len == Some(0) {
            self.buf.push(b']');
            State::Empty
        } else {
            State::First
        };
        Ok(Compound { w: self, state, time: None })
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, W>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, W>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, W>> {
        self.open(b'{');
        let time = self.static_key(variant, true);
        let mut c = self.serialize_seq(Some(len))?;
        c.time = time;
        Ok(c)
    }

    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, W>> {
        self.open(b'{');
        let state = if len == Some(0) {
            self.buf.push(b'}');
            State::Empty
        } else {
            State::First
        };
        Ok(Compound { w: self, state, time: None })
    }

    #[inline]
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, W>> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, W>> {
        self.open(b'{');
        let time = self.static_key(variant, true);
        let mut c = self.serialize_map(Some(len))?;
        c.time = time;
        Ok(c)
    }

    fn collect_str<T: ?Sized + Display>(self, value: &T) -> Result<()> {
        self.buf.push(b'"');
        write_display(&mut self.buf, value, None)?;
        self.buf.push(b'"');
        Ok(())
    }
}

/// `value`'s text escaped into `buf`, piece by piece as its `Display` hands them over (as
/// serde_json's `collect_str` does: for a key, the runs are followed across the pieces).
fn write_display<T: ?Sized + Display>(buf: &mut Vec<u8>, value: &T, key: Option<&mut KeyRuns>) -> Result<()> {
    struct Escaping<'b, 'k> {
        buf: &'b mut Vec<u8>,
        key: Option<&'k mut KeyRuns>,
    }
    impl std::fmt::Write for Escaping<'_, '_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            match self.key.as_deref_mut() {
                None if escape::plain(s.as_bytes()) => self.buf.extend_from_slice(s.as_bytes()),
                key => escape::push_escaped(self.buf, s, key),
            }
            Ok(())
        }
    }
    use std::fmt::Write as _;
    write!(Escaping { buf, key }, "{value}")
        .map_err(|_| <Error as ser::Error>::custom("a Display implementation returned an error"))
}

impl<W: Write> ser::SerializeSeq for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.w.maybe_flush()?;
        if !self.next() {
            self.w.buf.push(b',');
        }
        value.serialize(&mut *self.w)
    }

    #[inline]
    fn end(self) -> Result<()> {
        if self.state != State::Empty {
            self.w.buf.push(b']');
        }
        Ok(())
    }
}

impl<W: Write> ser::SerializeTuple for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        ser::SerializeSeq::end(self)
    }
}

impl<W: Write> ser::SerializeTupleStruct for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        ser::SerializeSeq::end(self)
    }
}

impl<W: Write> ser::SerializeTupleVariant for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        if self.state != State::Empty {
            self.w.buf.push(b']');
        }
        self.w.end_value(self.time);
        self.w.buf.push(b'}');
        Ok(())
    }
}

impl<W: Write> ser::SerializeMap for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.w.maybe_flush()?;
        if !self.next() {
            self.w.buf.push(b',');
        }
        self.time = key.serialize(KeyWriter { w: &mut *self.w })?;
        Ok(())
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.w.buf.push(b':');
        let time = self.time.take();
        self.w.entry_value(time, value)
    }

    fn end(self) -> Result<()> {
        if self.state != State::Empty {
            self.w.buf.push(b'}');
        }
        Ok(())
    }
}

impl<W: Write> ser::SerializeStruct for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        self.w.maybe_flush()?;
        let first = self.next();
        let time = self.w.static_key(key, first);
        self.w.entry_value(time, value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        ser::SerializeMap::end(self)
    }
}

impl<W: Write> ser::SerializeStructVariant for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        self.w.maybe_flush()?;
        let first = self.next();
        let time = self.w.static_key(key, first);
        self.w.entry_value(time, value)
    }

    fn end(self) -> Result<()> {
        if self.state != State::Empty {
            self.w.buf.push(b'}');
        }
        let time = self.time;
        self.w.end_value(time);
        self.w.buf.push(b'}');
        Ok(())
    }
}

/// A map's key, as serde_json writes one: strings (and unit variants) as strings, numbers
/// and `bool`s quoted, anything else an error. Gives the key's time key index.
struct KeyWriter<'a, W> {
    w: &'a mut Writer<W>,
}

fn key_must_be_a_string() -> Error {
    <Error as ser::Error>::custom("key must be a string")
}

impl<W> KeyWriter<'_, W> {
    /// A non-string key in quotes (never a time key).
    fn quoted(self, f: impl FnOnce(&mut Writer<W>) -> Result<()>) -> Result<Option<u8>> {
        self.w.buf.push(b'"');
        f(self.w)?;
        self.w.buf.push(b'"');
        Ok(None)
    }

    fn quoted_int<I: itoa::Integer>(self, v: I) -> Result<Option<u8>> {
        self.quoted(|w| {
            w.int(v);
            Ok(())
        })
    }
}

impl<W: Write> ser::Serializer for KeyWriter<'_, W> {
    type Ok = Option<u8>;
    type Error = Error;
    type SerializeSeq = Impossible<Option<u8>, Error>;
    type SerializeTuple = Impossible<Option<u8>, Error>;
    type SerializeTupleStruct = Impossible<Option<u8>, Error>;
    type SerializeTupleVariant = Impossible<Option<u8>, Error>;
    type SerializeMap = Impossible<Option<u8>, Error>;
    type SerializeStruct = Impossible<Option<u8>, Error>;
    type SerializeStructVariant = Impossible<Option<u8>, Error>;

    fn serialize_str(self, v: &str) -> Result<Option<u8>> {
        let buf = &mut self.w.buf;
        buf.push(b'"');
        let time = if escape::plain(v.as_bytes()) {
            buf.extend_from_slice(v.as_bytes());
            escape::time_key(v.as_bytes())
        } else {
            let mut runs = KeyRuns::default();
            escape::push_escaped(buf, v, Some(&mut runs));
            runs.time
        };
        buf.push(b'"');
        Ok(time)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Option<u8>> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Option<u8>> {
        value.serialize(self)
    }

    fn serialize_bool(self, v: bool) -> Result<Option<u8>> {
        self.quoted(|w| {
            w.buf.extend_from_slice(if v { b"true" } else { b"false" });
            Ok(())
        })
    }

    fn serialize_i8(self, v: i8) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_i16(self, v: i16) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_i32(self, v: i32) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_i64(self, v: i64) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_i128(self, v: i128) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_u8(self, v: u8) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_u16(self, v: u16) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_u32(self, v: u32) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_u64(self, v: u64) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_u128(self, v: u128) -> Result<Option<u8>> {
        self.quoted_int(v)
    }

    fn serialize_f32(self, v: f32) -> Result<Option<u8>> {
        if !v.is_finite() {
            return Err(<Error as ser::Error>::custom("float key must be finite (got NaN or +/-inf)"));
        }
        self.quoted(|w| w.float(f64::from(v), Some(v)))
    }

    fn serialize_f64(self, v: f64) -> Result<Option<u8>> {
        if !v.is_finite() {
            return Err(<Error as ser::Error>::custom("float key must be finite (got NaN or +/-inf)"));
        }
        self.quoted(|w| w.float(v, None))
    }

    fn serialize_char(self, v: char) -> Result<Option<u8>> {
        self.serialize_str(v.encode_utf8(&mut [0u8; 4]))
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<Option<u8>> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<Option<u8>> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Option<u8>> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<Option<u8>> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<Option<u8>> {
        Err(key_must_be_a_string())
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Option<u8>> {
        Err(key_must_be_a_string())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_must_be_a_string())
    }

    fn collect_str<T: ?Sized + Display>(self, value: &T) -> Result<Option<u8>> {
        let mut runs = KeyRuns::default();
        self.w.buf.push(b'"');
        write_display(&mut self.w.buf, value, Some(&mut runs))?;
        self.w.buf.push(b'"');
        Ok(runs.time)
    }
}
