//! Typed host storage: the Rust type that holds each element type ([`NativeType`]), and one
//! [`Buffer`] per element type ([`Storage`]), the memory behind every [`Literal`], aligned to
//! a cache line.
//!
//! [`Literal`]: crate::Literal

use std::fmt::Debug;
use std::sync::Mutex;

use crate::element_type::ElementType;
use crate::error::{Error, Result};

mod buffer;
mod recycled;
pub use buffer::Buffer;

/// A Rust type that holds elements of one [`ElementType`]: `bool`, `i8`…`i64`, `u8`…`u64`,
/// `half::f16`, `half::bf16`, `f32`, `f64`.
///
/// ```
/// use lazy_xla::{ElementType, NativeType};
/// assert_eq!(<half::bf16 as NativeType>::ELEMENT_TYPE, ElementType::Bf16);
/// assert_eq!(i8::LOWEST, -128);
/// ```
pub trait NativeType:
    Copy + Send + Sync + PartialEq + PartialOrd + Debug + Default + 'static + buffer::Zeroable
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
    /// Wraps a vector of this type as typed storage (a long one that does not start on a
    /// cache line is copied into memory that does).
    #[doc(hidden)]
    fn into_storage(values: Vec<Self>) -> Storage {
        Self::buffer_into_storage(Buffer::from_handed_over(values))
    }
    /// The buffer as a storage.
    #[doc(hidden)]
    fn buffer_into_storage(values: Buffer<Self>) -> Storage;
    /// The storage's elements, if they are of this type.
    #[doc(hidden)]
    fn slice_of(storage: &Storage) -> Option<&[Self]>;
    /// The storage's elements, mutable, if they are of this type.
    #[doc(hidden)]
    fn slice_of_mut(storage: &mut Storage) -> Option<&mut [Self]>;
}

macro_rules! native_type {
    ($rust:ty, $variant:ident, $zero:expr, $one:expr, $lowest:expr, $highest:expr, |$v:ident| $to_f64:expr) => {
        // SAFETY: all-zero bits are `false`, 0 or +0.0.
        unsafe impl buffer::Zeroable for $rust {}
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
            fn buffer_into_storage(values: Buffer<Self>) -> Storage {
                Storage::$variant(values)
            }
            fn slice_of(storage: &Storage) -> Option<&[Self]> {
                match storage {
                    Storage::$variant(v) => Some(&**v),
                    _ => None,
                }
            }
            fn slice_of_mut(storage: &mut Storage) -> Option<&mut [Self]> {
                match storage {
                    Storage::$variant(v) => Some(&mut **v),
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
            $crate::element_type::ElementType::Pred => {
                type $T = bool;
                $body
            }
            $crate::element_type::ElementType::S8 => {
                type $T = i8;
                $body
            }
            $crate::element_type::ElementType::S16 => {
                type $T = i16;
                $body
            }
            $crate::element_type::ElementType::S32 => {
                type $T = i32;
                $body
            }
            $crate::element_type::ElementType::S64 => {
                type $T = i64;
                $body
            }
            $crate::element_type::ElementType::U8 => {
                type $T = u8;
                $body
            }
            $crate::element_type::ElementType::U16 => {
                type $T = u16;
                $body
            }
            $crate::element_type::ElementType::U32 => {
                type $T = u32;
                $body
            }
            $crate::element_type::ElementType::U64 => {
                type $T = u64;
                $body
            }
            $crate::element_type::ElementType::F16 => {
                type $T = half::f16;
                $body
            }
            $crate::element_type::ElementType::Bf16 => {
                type $T = half::bf16;
                $body
            }
            $crate::element_type::ElementType::F32 => {
                type $T = f32;
                $body
            }
            $crate::element_type::ElementType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_native_type;

/// A typed buffer of elements, in memory order.
#[derive(Clone, Debug, PartialEq)]
#[doc(hidden)]
pub enum Storage {
    /// `pred` elements.
    Pred(Buffer<bool>),
    /// `s8` elements.
    S8(Buffer<i8>),
    /// `s16` elements.
    S16(Buffer<i16>),
    /// `s32` elements.
    S32(Buffer<i32>),
    /// `s64` elements.
    S64(Buffer<i64>),
    /// `u8` elements.
    U8(Buffer<u8>),
    /// `u16` elements.
    U16(Buffer<u16>),
    /// `u32` elements.
    U32(Buffer<u32>),
    /// `u64` elements.
    U64(Buffer<u64>),
    /// `f16` elements.
    F16(Buffer<half::f16>),
    /// `bf16` elements.
    Bf16(Buffer<half::bf16>),
    /// `f32` elements.
    F32(Buffer<f32>),
    /// `f64` elements.
    F64(Buffer<f64>),
}

/// Runs `$body` with `$values` bound to the storage's buffer, whatever its element type.
macro_rules! with_storage {
    ($storage:expr, $values:ident => $body:expr) => {
        match $storage {
            Storage::Pred($values) => $body,
            Storage::S8($values) => $body,
            Storage::S16($values) => $body,
            Storage::S32($values) => $body,
            Storage::S64($values) => $body,
            Storage::U8($values) => $body,
            Storage::U16($values) => $body,
            Storage::U32($values) => $body,
            Storage::U64($values) => $body,
            Storage::F16($values) => $body,
            Storage::Bf16($values) => $body,
            Storage::F32($values) => $body,
            Storage::F64($values) => $body,
        }
    };
}

impl Storage {
    /// `len` elements of `element_type` with arbitrary (but initialized) values, for a
    /// buffer that is about to be overwritten entirely: a recycled buffer when one fits, else
    /// fresh zeroed memory.
    pub(crate) fn for_overwrite(element_type: ElementType, len: usize) -> Result<Storage> {
        match recycled(element_type, len) {
            Some(storage) => Ok(storage),
            None => with_native_type!(element_type, T => Storage::filled(T::ZERO, len)),
        }
    }

    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        with_storage!(self, values => values.len())
    }

    /// `len` copies of `value`, failing (instead of aborting) when memory cannot be had.
    pub(crate) fn filled<T: NativeType>(value: T, len: usize) -> Result<Storage> {
        let mut values = Buffer::<T>::zeroed(len).ok_or_else(|| {
            Error::invalid(format!(
                "cannot allocate {len} elements of {} ({} bytes)",
                T::ELEMENT_TYPE,
                len.saturating_mul(size_of::<T>())
            ))
        })?;
        if value != T::ZERO {
            values.fill(value);
        }
        Ok(T::buffer_into_storage(values))
    }

    /// A storage of no elements (holding no memory).
    pub(crate) fn empty() -> Storage {
        bool::into_storage(Vec::new())
    }

    /// `len` elements of `element_type` at `pointer`, in memory the storage does not own (see
    /// [`Buffer::borrowed`]).
    ///
    /// # Safety
    /// As for [`Buffer::borrowed`]: `pointer` is aligned for the element type, holds `len`
    /// initialized elements of it, and stays allocated, used through nothing else, for as
    /// long as the storage lives.
    pub(crate) unsafe fn borrowed(
        element_type: ElementType,
        pointer: std::ptr::NonNull<u8>,
        len: usize,
    ) -> Storage {
        // SAFETY: the caller's promise, for the element type's Rust type.
        with_native_type!(element_type, T => T::buffer_into_storage(unsafe { Buffer::borrowed(pointer.cast::<T>(), len) }))
    }

    /// Whether the storage owns its memory (see [`Buffer::owns_memory`]).
    pub(crate) fn owns_memory(&self) -> bool {
        with_storage!(self, values => values.owns_memory())
    }

    /// The element type held.
    pub(crate) fn element_type(&self) -> ElementType {
        match self {
            Storage::Pred(_) => ElementType::Pred,
            Storage::S8(_) => ElementType::S8,
            Storage::S16(_) => ElementType::S16,
            Storage::S32(_) => ElementType::S32,
            Storage::S64(_) => ElementType::S64,
            Storage::U8(_) => ElementType::U8,
            Storage::U16(_) => ElementType::U16,
            Storage::U32(_) => ElementType::U32,
            Storage::U64(_) => ElementType::U64,
            Storage::F16(_) => ElementType::F16,
            Storage::Bf16(_) => ElementType::Bf16,
            Storage::F32(_) => ElementType::F32,
            Storage::F64(_) => ElementType::F64,
        }
    }

    /// The elements as a slice of `T`, or an [`Error::ElementTypeMismatch`].
    pub(crate) fn as_slice<T: NativeType>(&self) -> Result<&[T]> {
        T::slice_of(self).ok_or_else(|| Error::ElementTypeMismatch {
            expected: self.element_type(),
            actual: T::ELEMENT_TYPE,
        })
    }

    /// The elements as a mutable slice of `T`, or an [`Error::ElementTypeMismatch`].
    pub(crate) fn as_mut_slice<T: NativeType>(&mut self) -> Result<&mut [T]> {
        let expected = self.element_type();
        T::slice_of_mut(self).ok_or(Error::ElementTypeMismatch { expected, actual: T::ELEMENT_TYPE })
    }
}

/// Buffers smaller than this are not worth keeping: the allocator serves them without page
/// faults.
const RECYCLE_MIN_BYTES: usize = 1 << 20;
/// At most this many bytes of freed buffers are kept for reuse.
const RECYCLE_MAX_BYTES: usize = 1 << 30;

/// Large buffers freed by dropped literals, kept for reuse: a fresh 32 MiB buffer costs
/// thousands of page faults, more than the loop that fills it.
static RECYCLED: Mutex<Vec<Storage>> = Mutex::new(Vec::new());

/// Keeps a large buffer for reuse (dropping the oldest kept ones beyond the byte budget).
pub(crate) fn recycle(storage: Storage) {
    let bytes = storage.len() * storage.element_type().byte_size();
    if !storage.owns_memory() || !(RECYCLE_MIN_BYTES..=RECYCLE_MAX_BYTES).contains(&bytes) {
        return;
    }
    let Ok(mut kept) = RECYCLED.lock() else { return };
    kept.push(storage);
    let mut total: usize = kept.iter().map(|s| s.len() * s.element_type().byte_size()).sum();
    while total > RECYCLE_MAX_BYTES {
        let oldest = kept.remove(0);
        total -= oldest.len() * oldest.element_type().byte_size();
    }
}

/// A kept buffer of exactly this type and length, if there is one.
fn recycled(element_type: ElementType, len: usize) -> Option<Storage> {
    let mut kept = RECYCLED.lock().ok()?;
    let position = kept.iter().rposition(|s| s.element_type() == element_type && s.len() == len)?;
    Some(kept.swap_remove(position))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_types_match_their_element_types() {
        for t in ElementType::ALL {
            let size = with_native_type!(t, T => std::mem::size_of::<T>());
            assert_eq!(size, t.byte_size(), "{t}");
            let native = with_native_type!(t, T => T::ELEMENT_TYPE);
            assert_eq!(native, t);
        }
    }
}
