//! Small shared pieces for fixed-size header views: a `nom` combinator that takes exactly
//! `N` bytes as an array (so every accessor indexes a fixed array and cannot panic), and
//! big-endian field readers.

use nom::{IResult, Needed};

/// Take exactly `N` bytes as `&[u8; N]`: a `nom` parser (composable with nom's combinators)
/// written directly over `split_first_chunk`, since it runs for every header of every packet.
#[inline]
pub(crate) fn fixed<const N: usize>(input: &[u8]) -> IResult<&[u8], &[u8; N]> {
    match input.split_first_chunk::<N>() {
        Some((head, rest)) => Ok((rest, head)),
        None => Err(nom::Err::Incomplete(Needed::new(N - input.len()))),
    }
}

/// Read a 24-bit big-endian value from three bytes.
pub(crate) const fn be24(b0: u8, b1: u8, b2: u8) -> u32 {
    ((b0 as u32) << 16) | ((b1 as u32) << 8) | b2 as u32
}

/// Write a 24-bit value big-endian into three bytes.
pub(crate) const fn put24(v: u32) -> [u8; 3] {
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Defines a borrowed, fixed-size header view with `new`, `parse` and `bytes`.
macro_rules! view {
    ($(#[$m:meta])* $name:ident, $len:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq)]
        pub struct $name<'a>(&'a [u8; $len]);

        impl<'a> $name<'a> {
            /// Length of the header on the wire.
            pub const LEN: usize = $len;

            /// Wrap exactly `LEN` bytes.
            pub const fn new(bytes: &'a [u8; $len]) -> Self {
                $name(bytes)
            }

            /// `nom` parser: take `LEN` bytes and view them as this header.
            pub fn parse(input: &'a [u8]) -> nom::IResult<&'a [u8], Self> {
                let (rest, b) = $crate::wire::fixed::<$len>(input)?;
                Ok((rest, $name(b)))
            }

            /// The header's bytes.
            pub const fn bytes(&self) -> &'a [u8; $len] {
                self.0
            }
        }

        impl core::fmt::Debug for $name<'_> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.repr(), f)
            }
        }
    };
}
pub(crate) use view;
