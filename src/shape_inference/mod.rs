//! Shape inference: pure functions from operand shapes (and attributes) to a result shape or
//! XLA's own rejection, one file per op family, mirroring `xla/service/shape_inference.cc`.
//!
//! Messages are XLA's sentences verbatim (as jaxlib 0.6.0 prints them, shapes without layout);
//! the builder adds the op, the operands with layouts and the caller's location.

pub(crate) mod bitcast;
pub(crate) mod broadcast;
pub(crate) mod control;
pub(crate) mod convolution;
pub(crate) mod dot;
pub(crate) mod dynamic_slice;
pub(crate) mod elementwise;
pub(crate) mod gather;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod shape_ops;
pub(crate) mod sort;
pub(crate) mod tuple;
pub(crate) mod window;

use crate::element_type::ElementType;

use crate::error::Result;

use crate::shape::Shape;

/// XLA's `primitive_util::HigherPrecisionType`: the type preferred when two meet — floats by
/// range, then precision; then wider types; then signed over unsigned.
pub(crate) fn higher_precision(a: ElementType, b: ElementType) -> ElementType {
    let rank = |t: ElementType| {
        let (exponent, significand) = match t {
            ElementType::F16 => (16, 11),
            ElementType::Bf16 => (128, 8),
            ElementType::F32 => (128, 24),
            ElementType::F64 => (1024, 53),
            _ => (-1, -1),
        };
        let bits = if t == ElementType::Pred { 1 } else { 8 * t.byte_size() as i32 };
        (exponent, significand, bits, t.is_signed_integral())
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// XLA's `SameElementTypeIgnoringFpPrecision`: equal types, or two float types.
pub(crate) fn same_type_ignoring_fp_precision(a: ElementType, b: ElementType) -> bool {
    a == b || (a.is_float() && b.is_float())
}

/// XLA's `ShapeUtil::CompatibleIgnoringFpPrecision`: same dimensions and element types up to
/// float precision, layouts aside; tuples element by element.
pub(crate) fn compatible_ignoring_fp_precision(a: &Shape, b: &Shape) -> bool {
    match (a.is_tuple(), b.is_tuple()) {
        (false, false) => {
            a.dimensions() == b.dimensions()
                && same_type_ignoring_fp_precision(a.element_type(), b.element_type())
        }
        (true, true) => {
            let (a, b) = (a.tuple_shapes(), b.tuple_shapes());
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| compatible_ignoring_fp_precision(a, b))
        }
        _ => false,
    }
}

/// A shape made by inference, or XLA's rejection of it (a negative or overflowing size).
pub(crate) fn make_shape(element_type: ElementType, dimensions: &[i64]) -> Result<Shape> {
    Shape::try_new(element_type, dimensions)
}

/// Whether `values` is a permutation of `0..values.len()`.
pub(crate) fn is_permutation(values: &[i64]) -> bool {
    let mut seen = vec![false; values.len()];
    values
        .iter()
        .all(|&v| (0..values.len() as i64).contains(&v) && !std::mem::replace(&mut seen[v as usize], true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElementType::*;

    #[test]
    fn higher_precision_follows_xla() {
        assert_eq!(higher_precision(F32, Bf16), F32);
        assert_eq!(higher_precision(F16, Bf16), Bf16); // range first
        assert_eq!(higher_precision(S32, F16), F16);
        assert_eq!(higher_precision(U32, S32), S32);
        assert_eq!(higher_precision(S8, S64), S64);
        assert_eq!(higher_precision(Pred, U8), U8);
    }
}
