//! XLA's primitive element types (`PrimitiveType`): their names, sizes and kinds.
//!
//! The bottom of the crate: it imports nothing from it. The Rust types that hold each
//! element type are named in `storage` ([`NativeType`](crate::storage::NativeType)).

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

#[cfg(test)]
mod tests {
    use super::*;

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
