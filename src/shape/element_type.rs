//! XLA's primitive element types and the Rust types that hold them.

use std::fmt::Debug;
use std::str::FromStr;

use crate::storage::Storage;
use crate::Error;

/// The element type of an array, with XLA's names (`f32`, `s32`, `pred`, …).
///
/// ```
/// use lazy_xla::ElementType;
/// let t: ElementType = "bf16".parse()?;
/// assert_eq!(t, ElementType::Bf16);
/// assert_eq!(t.to_string(), "bf16");
/// assert_eq!(t.byte_size(), 2);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, derive_more::Display)]
pub enum ElementType {
    /// Boolean (`bool`).
    #[display("pred")]
    Pred,
    /// 8-bit signed integer (`i8`).
    #[display("s8")]
    S8,
    /// 16-bit signed integer (`i16`).
    #[display("s16")]
    S16,
    /// 32-bit signed integer (`i32`).
    #[display("s32")]
    S32,
    /// 64-bit signed integer (`i64`).
    #[display("s64")]
    S64,
    /// 8-bit unsigned integer (`u8`).
    #[display("u8")]
    U8,
    /// 16-bit unsigned integer (`u16`).
    #[display("u16")]
    U16,
    /// 32-bit unsigned integer (`u32`).
    #[display("u32")]
    U32,
    /// 64-bit unsigned integer (`u64`).
    #[display("u64")]
    U64,
    /// IEEE half precision (`half::f16`).
    #[display("f16")]
    F16,
    /// bfloat16 (`half::bf16`).
    #[display("bf16")]
    Bf16,
    /// IEEE single precision (`f32`).
    #[display("f32")]
    F32,
    /// IEEE double precision (`f64`).
    #[display("f64")]
    F64,
}

impl ElementType {
    /// Every element type, in XLA's order.
    ///
    /// ```
    /// assert_eq!(lazy_xla::ElementType::ALL.len(), 13);
    /// ```
    pub const ALL: [ElementType; 13] = [
        ElementType::Pred,
        ElementType::S8,
        ElementType::S16,
        ElementType::S32,
        ElementType::S64,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F32,
        ElementType::F64,
    ];

    /// Bytes one element takes.
    ///
    /// ```
    /// assert_eq!(lazy_xla::ElementType::F64.byte_size(), 8);
    /// ```
    pub fn byte_size(self) -> usize {
        use ElementType::*;
        match self {
            Pred | S8 | U8 => 1,
            S16 | U16 | F16 | Bf16 => 2,
            S32 | U32 | F32 => 4,
            S64 | U64 | F64 => 8,
        }
    }

    /// Whether this is a floating-point type (f16, bf16, f32, f64).
    ///
    /// ```
    /// assert!(lazy_xla::ElementType::Bf16.is_float());
    /// ```
    pub fn is_float(self) -> bool {
        matches!(self, ElementType::F16 | ElementType::Bf16 | ElementType::F32 | ElementType::F64)
    }

    /// Whether this is a signed or unsigned integer type (not `pred`).
    ///
    /// ```
    /// assert!(lazy_xla::ElementType::U8.is_integral());
    /// assert!(!lazy_xla::ElementType::Pred.is_integral());
    /// ```
    pub fn is_integral(self) -> bool {
        self.is_signed_integral() || self.is_unsigned_integral()
    }

    /// Whether this is s8, s16, s32 or s64.
    ///
    /// ```
    /// assert!(lazy_xla::ElementType::S16.is_signed_integral());
    /// ```
    pub fn is_signed_integral(self) -> bool {
        matches!(self, ElementType::S8 | ElementType::S16 | ElementType::S32 | ElementType::S64)
    }

    /// Whether this is u8, u16, u32 or u64.
    ///
    /// ```
    /// assert!(lazy_xla::ElementType::U64.is_unsigned_integral());
    /// ```
    pub fn is_unsigned_integral(self) -> bool {
        matches!(self, ElementType::U8 | ElementType::U16 | ElementType::U32 | ElementType::U64)
    }

    /// XLA's `PrimitiveType_Name`, as some of its messages print it (`F32`, `PRED`, `BF16`).
    ///
    /// ```
    /// assert_eq!(lazy_xla::ElementType::Bf16.primitive_type_name(), "BF16");
    /// ```
    pub fn primitive_type_name(self) -> String {
        self.to_string().to_uppercase()
    }
}

impl FromStr for ElementType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        ElementType::ALL
            .into_iter()
            .find(|t| t.to_string() == s)
            .ok_or_else(|| Error::invalid(format!("Invalid element type string: \"{s}\".")))
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that holds elements of one [`ElementType`]: `bool`, `i8`…`i64`, `u8`…`u64`,
/// `half::f16`, `half::bf16`, `f32`, `f64`.
///
/// ```
/// use lazy_xla::{ElementType, NativeType};
/// assert_eq!(<half::bf16 as NativeType>::ELEMENT_TYPE, ElementType::Bf16);
/// assert_eq!(i8::LOWEST, -128);
/// ```
pub trait NativeType:
    Copy + Send + Sync + PartialEq + PartialOrd + Debug + Default + 'static + sealed::Sealed
{
    /// The element type this Rust type holds.
    const ELEMENT_TYPE: ElementType;
    /// 0 (`false` for `pred`).
    const ZERO: Self;
    /// 1 (`true` for `pred`).
    const ONE: Self;
    /// The lowest value: the minimum of an integer type, -∞ for floats (XLA's `MinValue`).
    const LOWEST: Self;
    /// The highest value: the maximum of an integer type, +∞ for floats (XLA's `MaxValue`).
    const HIGHEST: Self;
    /// The value as an `f64` (exact for all but the largest 64-bit integers).
    fn to_f64(self) -> f64;
    /// Wraps a vector of this type as typed storage.
    #[doc(hidden)]
    fn into_storage(values: Vec<Self>) -> Storage;
    /// The storage's elements, if they are of this type.
    #[doc(hidden)]
    fn slice_of(storage: &Storage) -> Option<&[Self]>;
    /// The storage's elements, mutable, if they are of this type.
    #[doc(hidden)]
    fn slice_of_mut(storage: &mut Storage) -> Option<&mut [Self]>;
}

macro_rules! native_type {
    ($rust:ty, $variant:ident, $zero:expr, $one:expr, $lowest:expr, $highest:expr, |$v:ident| $to_f64:expr) => {
        impl sealed::Sealed for $rust {}
        impl NativeType for $rust {
            const ELEMENT_TYPE: ElementType = ElementType::$variant;
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            const LOWEST: Self = $lowest;
            const HIGHEST: Self = $highest;
            fn to_f64(self) -> f64 {
                let $v = self;
                $to_f64
            }
            fn into_storage(values: Vec<Self>) -> Storage {
                Storage::$variant(values)
            }
            fn slice_of(storage: &Storage) -> Option<&[Self]> {
                match storage {
                    Storage::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_of_mut(storage: &mut Storage) -> Option<&mut [Self]> {
                match storage {
                    Storage::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}

macro_rules! native_int {
    ($($rust:ty => $variant:ident),*) => {$(
        native_type!($rust, $variant, 0, 1, <$rust>::MIN, <$rust>::MAX, |v| v as f64);
    )*};
}

native_type!(bool, Pred, false, true, false, true, |v| if v { 1.0 } else { 0.0 });
native_int!(i8 => S8, i16 => S16, i32 => S32, i64 => S64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);
native_type!(
    half::f16,
    F16,
    half::f16::ZERO,
    half::f16::ONE,
    half::f16::NEG_INFINITY,
    half::f16::INFINITY,
    |v| v.to_f64()
);
native_type!(
    half::bf16,
    Bf16,
    half::bf16::ZERO,
    half::bf16::ONE,
    half::bf16::NEG_INFINITY,
    half::bf16::INFINITY,
    |v| v.to_f64()
);
native_type!(f32, F32, 0.0, 1.0, f32::NEG_INFINITY, f32::INFINITY, |v| v as f64);
native_type!(f64, F64, 0.0, 1.0, f64::NEG_INFINITY, f64::INFINITY, |v| v);

/// Runs `$body` with `$T` bound to the Rust type of the [`ElementType`] `$element_type`: the one
/// place that turns a run-time element type into a monomorphized call.
macro_rules! with_native_type {
    ($element_type:expr, $T:ident => $body:expr) => {
        match $element_type {
            $crate::ElementType::Pred => {
                type $T = bool;
                $body
            }
            $crate::ElementType::S8 => {
                type $T = i8;
                $body
            }
            $crate::ElementType::S16 => {
                type $T = i16;
                $body
            }
            $crate::ElementType::S32 => {
                type $T = i32;
                $body
            }
            $crate::ElementType::S64 => {
                type $T = i64;
                $body
            }
            $crate::ElementType::U8 => {
                type $T = u8;
                $body
            }
            $crate::ElementType::U16 => {
                type $T = u16;
                $body
            }
            $crate::ElementType::U32 => {
                type $T = u32;
                $body
            }
            $crate::ElementType::U64 => {
                type $T = u64;
                $body
            }
            $crate::ElementType::F16 => {
                type $T = half::f16;
                $body
            }
            $crate::ElementType::Bf16 => {
                type $T = half::bf16;
                $body
            }
            $crate::ElementType::F32 => {
                type $T = f32;
                $body
            }
            $crate::ElementType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_native_type;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sizes_match_rust_types() {
        for t in ElementType::ALL {
            assert_eq!(t.to_string().parse::<ElementType>().unwrap(), t);
            let size = with_native_type!(t, T => std::mem::size_of::<T>());
            assert_eq!(size, t.byte_size(), "{t}");
            let native = with_native_type!(t, T => T::ELEMENT_TYPE);
            assert_eq!(native, t);
        }
    }

    #[test]
    fn unknown_name_is_an_error() {
        let err = "f33".parse::<ElementType>().unwrap_err();
        assert_eq!(err.to_string(), "Invalid element type string: \"f33\".");
    }

    #[test]
    fn classification() {
        use ElementType::*;
        let floats: Vec<_> = ElementType::ALL.into_iter().filter(|t| t.is_float()).collect();
        assert_eq!(floats, [F16, Bf16, F32, F64]);
        let ints: Vec<_> = ElementType::ALL.into_iter().filter(|t| t.is_integral()).collect();
        assert_eq!(ints, [S8, S16, S32, S64, U8, U16, U32, U64]);
        assert_eq!(F32.primitive_type_name(), "F32");
    }
}
