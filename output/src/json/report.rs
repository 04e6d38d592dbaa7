//! `report --json`'s document: the report through the serde writer as any document, but
//! its `flows` (nine in ten of the bytes at many QPs) through [`super::flows`], the entries
//! written by hand as they are built.

use super::flows;
use super::writer::{Compound, Writer};
use rocescope_analyzer::report::StreamedReport;
use serde::ser::{self, Impossible, Serialize};
use std::fmt::Display;
use std::io::Write;

type Error = serde_json::Error;
type Result<T> = std::result::Result<T, Error>;

/// The report's field that holds the flows' entries.
const FLOWS: &str = "flows";

/// Serialise the report into `w`: the same bytes as `w` serialising it through serde.
pub(super) fn write<W: Write>(w: &mut Writer<W>, report: &StreamedReport<'_>, threads: usize) -> Result<()> {
    report.serialize(Top { w, report, threads })
}

/// The serializer the report's own `Serialize` is handed: the report is an object, whose
/// fields go to the serde writer but `flows`.
struct Top<'w, 'r, 'a, W> {
    w: &'w mut Writer<W>,
    report: &'r StreamedReport<'a>,
    /// Threads for the flows' entries.
    threads: usize,
}

/// The report's fields.
struct Fields<'w, 'r, 'a, W> {
    object: Compound<'w, W>,
    report: &'r StreamedReport<'a>,
    threads: usize,
}

/// The flows' entries, as serde writes the report's list of them.
fn write_flows<W: Write>(w: &mut Writer<W>, report: &StreamedReport<'_>, threads: usize) -> Result<()> {
    if super::parallel::write_flows(w, report, threads)? {
        return Ok(());
    }
    w.raw(b"[");
    let mut first = true;
    for id in 0..report.flow_count() {
        let Some(f) = report.flow(id) else { continue };
        w.maybe_flush()?;
        if !first {
            w.raw(b",");
        }
        first = false;
        flows::flow(w, &f)?;
    }
    w.raw(b"]");
    Ok(())
}

impl<W: Write> ser::SerializeStruct for Fields<'_, '_, '_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        if key == FLOWS {
            let (report, threads) = (self.report, self.threads);
            self.object.field_with(key, |w| write_flows(w, report, threads))
        } else {
            ser::SerializeStruct::serialize_field(&mut self.object, key, value)
        }
    }

    fn end(self) -> Result<()> {
        ser::SerializeStruct::end(self.object)
    }
}

/// Anything but an object at the top is not the report: written as serde would.
macro_rules! pass {
    ($($f:ident($($a:ident: $t:ty),*)),* $(,)?) => {$(
        fn $f(self, $($a: $t),*) -> Result<()> {
            ser::Serializer::$f(&mut *self.w, $($a),*)
        }
    )*};
}

impl<'w, 'r, 'a, W: Write> ser::Serializer for Top<'w, 'r, 'a, W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Fields<'w, 'r, 'a, W>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Fields<'w, 'r, 'a, W>> {
        let object = ser::Serializer::serialize_struct(self.w, name, len)?;
        Ok(Fields { object, report: self.report, threads: self.threads })
    }

    pass!(
        serialize_bool(v: bool),
        serialize_i8(v: i8),
        serialize_i16(v: i16),
        serialize_i32(v: i32),
        serialize_i64(v: i64),
        serialize_u8(v: u8),
        serialize_u16(v: u16),
        serialize_u32(v: u32),
        serialize_u64(v: u64),
        serialize_f32(v: f32),
        serialize_f64(v: f64),
        serialize_char(v: char),
        serialize_str(v: &str),
        serialize_bytes(v: &[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(name: &'static str),
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str),
    );

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::Serializer::serialize_newtype_variant(&mut *self.w, name, index, variant, value)
    }

    fn collect_str<T: ?Sized + Display>(self, value: &T) -> Result<()> {
        ser::Serializer::collect_str(&mut *self.w, value)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(not_a_report())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(not_a_report())
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct> {
        Err(not_a_report())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(not_a_report())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(not_a_report())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(not_a_report())
    }
}

fn not_a_report() -> Error {
    <Error as ser::Error>::custom("a report serialises as an object")
}
