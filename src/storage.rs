//! Typed host storage: one `Vec` per element type, the buffer behind every [`Literal`].
//!
//! [`Literal`]: crate::Literal

use crate::{ElementType, Error, NativeType, Result};

/// A typed vector of elements, in memory order.
#[derive(Clone, Debug, PartialEq)]
#[doc(hidden)]
pub enum Storage {
    /// `pred` elements.
    Pred(Vec<bool>),
    /// `s8` elements.
    S8(Vec<i8>),
    /// `s16` elements.
    S16(Vec<i16>),
    /// `s32` elements.
    S32(Vec<i32>),
    /// `s64` elements.
    S64(Vec<i64>),
    /// `u8` elements.
    U8(Vec<u8>),
    /// `u16` elements.
    U16(Vec<u16>),
    /// `u32` elements.
    U32(Vec<u32>),
    /// `u64` elements.
    U64(Vec<u64>),
    /// `f16` elements.
    F16(Vec<half::f16>),
    /// `bf16` elements.
    Bf16(Vec<half::bf16>),
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
}

impl Storage {
    /// `len` copies of `value`, failing (instead of aborting) when memory cannot be had.
    pub(crate) fn filled<T: NativeType>(value: T, len: usize) -> Result<Storage> {
        let mut values = Vec::new();
        values.try_reserve_exact(len).map_err(|_| {
            Error::invalid(format!(
                "cannot allocate {len} elements of {} ({} bytes)",
                T::ELEMENT_TYPE,
                len.saturating_mul(T::ELEMENT_TYPE.byte_size())
            ))
        })?;
        values.resize(len, value);
        Ok(T::into_storage(values))
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
        T::slice_of(self)
            .ok_or(Error::ElementTypeMismatch { expected: self.element_type(), actual: T::ELEMENT_TYPE })
    }

    /// The elements as a mutable slice of `T`, or an [`Error::ElementTypeMismatch`].
    pub(crate) fn as_mut_slice<T: NativeType>(&mut self) -> Result<&mut [T]> {
        let expected = self.element_type();
        T::slice_of_mut(self).ok_or(Error::ElementTypeMismatch { expected, actual: T::ELEMENT_TYPE })
    }
}
