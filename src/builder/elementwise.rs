//! Element-wise ops as free functions: binary (with broadcasting), compare, unary, select,
//! clamp and convert.

use crate::attributes::{BinaryOp, ComparisonDirection, UnaryOp};
use crate::builder::builder::XlaOp;
use crate::element_type::ElementType;
use crate::hlo::ir::Opcode;
use crate::shape_inference::bitcast::bitcast_convert_shape;
use crate::shape_inference::elementwise::{
    binary_shape, clamp_shape, compare_shape, convert_shape, select_shape, unary_shape,
};
use crate::shape_inference::higher_precision;

/// Records a binary element-wise op with XLA's broadcasting.
#[track_caller]
pub(crate) fn binary<'b>(
    op: BinaryOp,
    lhs: XlaOp<'b>,
    rhs: XlaOp<'b>,
    broadcast_dimensions: &[i64],
) -> XlaOp<'b> {
    lhs.builder().record(op.hlo_name(), &[lhs, rhs], |emit, operands| {
        let [l, r] = operands else { unreachable!("two operands") };
        let result = binary_shape(op, &l.shape, &r.shape, broadcast_dimensions)?;
        let ids = emit.broadcast_binary_operands(&result, l, r, broadcast_dimensions)?;
        let ids = ids.map(|id| emit.convert_if_needed(id, result.element_type()));
        Ok(emit.emit(Opcode::Binary(op), &ids, result))
    })
}

/// Records a comparison with XLA's broadcasting; the result is `pred`.
#[track_caller]
pub(crate) fn compare<'b>(
    direction: ComparisonDirection,
    lhs: XlaOp<'b>,
    rhs: XlaOp<'b>,
    broadcast_dimensions: &[i64],
) -> XlaOp<'b> {
    lhs.builder().record("compare", &[lhs, rhs], |emit, operands| {
        let [l, r] = operands else { unreachable!("two operands") };
        let result = compare_shape(&l.shape, &r.shape, broadcast_dimensions)?;
        let ids = emit.broadcast_binary_operands(&result, l, r, broadcast_dimensions)?;
        let common = higher_precision(l.shape.element_type(), r.shape.element_type());
        let ids = ids.map(|id| emit.convert_if_needed(id, common));
        Ok(emit.emit(Opcode::Compare(direction), &ids, result))
    })
}

/// Records a unary element-wise op.
#[track_caller]
pub(crate) fn unary(op: UnaryOp, operand: XlaOp<'_>) -> XlaOp<'_> {
    operand.builder().record(op.hlo_name(), &[operand], |emit, operands| {
        let result = unary_shape(op, &operands[0].shape)?;
        Ok(emit.emit(Opcode::Unary(op), &[operands[0].id], result))
    })
}

/// Defines free functions of two operands, each with a runnable example on a vector and a
/// scalar of the Rust literal `$value` (result element type `$result`).
macro_rules! two_operand_functions {
    ($record:ident($kind:ident): $($name:ident => $op:ident, $value:literal -> $result:literal, $what:literal;)*) => {$(
        #[doc = concat!($what, ", with XLA's broadcasting: `broadcast_dimensions` maps a \
            lower-rank operand onto dimensions of the other; scalars and size-1 dimensions \
            broadcast without it.")]
        ///
        /// ```
        /// use lazy_xla::*;
        /// let b = XlaBuilder::new("f");
        #[doc = concat!("let x = b.constant_r1(&[", $value, ", ", $value, "]);")]
        #[doc = concat!("let y = ", stringify!($name), "(x, b.constant_r0(", $value, "), &[]);")]
        #[doc = concat!("assert_eq!(b.get_shape(y)?, shape!(", $result, "[2]));")]
        /// # Ok::<(), lazy_xla::Error>(())
        /// ```
        #[track_caller]
        pub fn $name<'b>(lhs: XlaOp<'b>, rhs: XlaOp<'b>, broadcast_dimensions: &[i64]) -> XlaOp<'b> {
            $record($kind::$op, lhs, rhs, broadcast_dimensions)
        }
    )*};
}

two_operand_functions! { binary(BinaryOp):
    add => Add, "1.5f32" -> "f32", "Element-wise `lhs + rhs`";
    sub => Sub, "1.5f32" -> "f32", "Element-wise `lhs - rhs`";
    mul => Mul, "1.5f32" -> "f32", "Element-wise `lhs * rhs`";
    div => Div, "7i32" -> "s32", "Element-wise `lhs / rhs` (integers truncate toward zero; `x / 0` is -1 for signed integers)";
    rem => Rem, "7i32" -> "s32", "Element-wise remainder with the sign of `lhs` (`x % 0` is `x` for integers)";
    max => Max, "1.5f64" -> "f64", "Element-wise maximum (NaN if either is NaN)";
    min => Min, "1.5f64" -> "f64", "Element-wise minimum (NaN if either is NaN)";
    pow => Pow, "2.0f32" -> "f32", "Element-wise `lhs` raised to `rhs`";
    atan2 => Atan2, "2.0f32" -> "f32", "Element-wise `atan2(lhs, rhs)`, the angle of the point (rhs, lhs)";
    and => And, "true" -> "pred", "Element-wise logical (pred) or bitwise (integers) and";
    or => Or, "true" -> "pred", "Element-wise logical (pred) or bitwise (integers) or";
    xor => Xor, "5u8" -> "u8", "Element-wise logical (pred) or bitwise (integers) exclusive or";
    shift_left => ShiftLeft, "3u32" -> "u32", "Element-wise `lhs << rhs` (0 when `rhs` is negative or at least the bit width)";
    shift_right_arithmetic => ShiftRightArithmetic, "-8i32" -> "s32", "Element-wise `lhs >> rhs` filling with the sign bit";
    shift_right_logical => ShiftRightLogical, "8i64" -> "s64", "Element-wise `lhs >> rhs` filling with zeros";
}

two_operand_functions! { compare(ComparisonDirection):
    eq => Eq, "1.5f32" -> "pred", "Element-wise `lhs == rhs`, as `pred`";
    ne => Ne, "1.5f32" -> "pred", "Element-wise `lhs != rhs`, as `pred`";
    ge => Ge, "1i8" -> "pred", "Element-wise `lhs >= rhs`, as `pred`";
    gt => Gt, "1i8" -> "pred", "Element-wise `lhs > rhs`, as `pred`";
    le => Le, "1u16" -> "pred", "Element-wise `lhs <= rhs`, as `pred`";
    lt => Lt, "1u16" -> "pred", "Element-wise `lhs < rhs`, as `pred`";
}

/// Defines the unary free functions, each with a runnable example on `$value`.
macro_rules! unary_functions {
    ($($name:ident => $op:ident, $value:literal -> $result:literal, $what:literal;)*) => {$(
        #[doc = concat!($what, "; the result keeps the operand's shape and layout.")]
        ///
        /// ```
        /// use lazy_xla::*;
        /// let b = XlaBuilder::new("f");
        #[doc = concat!("let y = ", stringify!($name), "(b.constant_r1(&[", $value, ", ", $value, "]));")]
        #[doc = concat!("assert_eq!(b.get_shape(y)?, shape!(", $result, "[2]));")]
        /// # Ok::<(), lazy_xla::Error>(())
        /// ```
        #[track_caller]
        pub fn $name(operand: XlaOp<'_>) -> XlaOp<'_> {
            unary(UnaryOp::$op, operand)
        }
    )*};
}

unary_functions! {
    neg => Neg, "1.5f32" -> "f32", "Element-wise `-x` (integers wrap)";
    abs => Abs, "-3i32" -> "s32", "Element-wise `|x|` (signed integers and floats)";
    exp => Exp, "1.0f32" -> "f32", "Element-wise `e^x` (floats)";
    log => Log, "1.0f32" -> "f32", "Element-wise natural logarithm (floats)";
    log1p => Log1p, "1.0f64" -> "f64", "Element-wise `ln(1 + x)`, accurate near 0 (floats)";
    expm1 => Expm1, "1.0f64" -> "f64", "Element-wise `e^x - 1`, accurate near 0 (floats)";
    tanh => Tanh, "1.0f32" -> "f32", "Element-wise hyperbolic tangent (floats)";
    logistic => Logistic, "1.0f32" -> "f32", "Element-wise logistic sigmoid `1 / (1 + e^-x)` (floats)";
    sqrt => Sqrt, "4.0f32" -> "f32", "Element-wise square root (floats)";
    rsqrt => Rsqrt, "4.0f32" -> "f32", "Element-wise reciprocal square root (floats)";
    sign => Sign, "-2.0f32" -> "f32", "Element-wise sign: -1, 0 or 1 (±0 and NaN pass through for floats)";
    floor => Floor, "1.5f32" -> "f32", "Element-wise rounding toward -∞ (floats)";
    ceil => Ceil, "1.5f32" -> "f32", "Element-wise rounding toward +∞ (floats)";
    round => Round, "2.5f32" -> "f32", "Element-wise rounding to nearest, halves away from zero (floats)";
    round_nearest_even => RoundNearestEven, "2.5f32" -> "f32", "Element-wise rounding to nearest, halves to even (floats; XLA's RoundNearestEven, `jnp.round`)";
    sin => Sin, "1.0f32" -> "f32", "Element-wise sine (floats)";
    cos => Cos, "1.0f32" -> "f32", "Element-wise cosine (floats)";
    not => Not, "true" -> "pred", "Element-wise logical not (pred) or bitwise not (integers)";
    is_finite => IsFinite, "1.0f32" -> "pred", "Element-wise test that a float is neither infinite nor NaN, as `pred`";
    clz => Clz, "1u32" -> "u32", "Element-wise count of leading zero bits (integers)";
    population_count => PopulationCount, "7i64" -> "s64", "Element-wise count of one bits (integers)";
    erf => Erf, "0.5f32" -> "f32", "Element-wise error function (floats)";
    tan => Tan, "1.0f64" -> "f64", "Element-wise tangent (floats)";
    cbrt => Cbrt, "8.0f32" -> "f32", "Element-wise cube root (floats)";
}

/// `operand` rounded, element by element, to a float of `exponent_bits` exponent bits and
/// `mantissa_bits` explicit mantissa bits (to nearest, ties to even; beyond the narrower
/// exponent range ±∞, below it ±0), kept in its own type: XLA's `ReducePrecision`.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// // bfloat16's precision, computed in f32.
/// let y = reduce_precision(b.constant_r1(&[1.0f32 + 1.0 / 1024.0]), 8, 7);
/// let out = b.build(y)?.compile(&CompileOptions::default())?.execute(&[])?;
/// assert_eq!(out.to_vec::<f32>()?, vec![1.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn reduce_precision(operand: XlaOp<'_>, exponent_bits: i32, mantissa_bits: i32) -> XlaOp<'_> {
    unary(UnaryOp::ReducePrecision { exponent_bits, mantissa_bits }, operand)
}

/// `on_true` where `pred` is true, else `on_false`, element-wise. A scalar argument is
/// broadcast to the others' shape; the result takes the pred's layout.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[3]), "x");
/// let relu = select(gt(x, b.constant_r0(0.0f32), &[]), x, b.constant_r0(0.0f32));
/// assert_eq!(b.get_shape(relu)?, shape!(f32[3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn select<'b>(pred: XlaOp<'b>, on_true: XlaOp<'b>, on_false: XlaOp<'b>) -> XlaOp<'b> {
    pred.builder().record("select", &[pred, on_true, on_false], |emit, operands| {
        let ids = emit.broadcast_ternary_scalars(operands)?;
        let shapes: Vec<_> = ids.iter().map(|&id| emit.shape(id).clone()).collect();
        let result = select_shape(&shapes[0], &shapes[1], &shapes[2])?;
        let branches = [ids[1], ids[2]].map(|id| emit.convert_if_needed(id, result.element_type()));
        Ok(emit.emit(Opcode::Select, &[ids[0], branches[0], branches[1]], result))
    })
}

/// `operand` clamped to `[min, max]` element-wise (`max` wins where `min > max`). Any argument
/// may be a scalar; the result has the operand's shape and type.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[3]), "x");
/// let y = clamp(b.constant_r0(0.0f32), x, b.constant_r0(1.0f32));
/// assert_eq!(b.get_shape(y)?, shape!(f32[3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn clamp<'b>(min: XlaOp<'b>, operand: XlaOp<'b>, max: XlaOp<'b>) -> XlaOp<'b> {
    min.builder().record("clamp", &[min, operand, max], |emit, operands| {
        let ids = emit.broadcast_ternary_scalars(operands)?;
        let shapes: Vec<_> = ids.iter().map(|&id| emit.shape(id).clone()).collect();
        let result = clamp_shape(&shapes[0], &shapes[1], &shapes[2])?;
        let ids: Vec<_> =
            ids.into_iter().map(|id| emit.convert_if_needed(id, result.element_type())).collect();
        Ok(emit.emit(Opcode::Clamp, &ids, result))
    })
}

/// `operand` converted to `element_type` element-wise: floats to integers truncate toward
/// zero and saturate (NaN becomes 0), integers wrap, anything nonzero becomes `true`.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = convert_element_type(b.constant_r1(&[1.5f32]), ElementType::S32);
/// assert_eq!(b.get_shape(x)?, shape!(s32[1]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn convert_element_type(operand: XlaOp<'_>, element_type: ElementType) -> XlaOp<'_> {
    operand.builder().record("convert", &[operand], |emit, operands| {
        let result = convert_shape(&operands[0].shape, element_type)?;
        Ok(emit.emit(Opcode::Convert, &[operands[0].id], result))
    })
}

/// XLA's `BitcastConvertType`: `operand`'s bits read as `new_element_type`. The same width keeps
/// the shape; a narrower type adds a last dimension of the width ratio (`f32[2]` → `u8[2,4]`,
/// little-endian), a wider one takes the last dimension, which must be the ratio, together.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("bits");
/// let x = b.parameter(0, &shape!(f32[2]), "x");
/// assert_eq!(b.get_shape(bitcast_convert_type(x, ElementType::U8))?, shape!(u8[2, 4]));
/// let exe = b.build(bitcast_convert_type(x, ElementType::S32))?.compile(&CompileOptions::default())?;
/// let out = exe.execute(&[&Literal::vec1(&[1.0f32, -2.0])])?;
/// assert_eq!(out.to_vec::<i32>()?, vec![0x3f80_0000, 0xc000_0000u32 as i32]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn bitcast_convert_type(operand: XlaOp<'_>, new_element_type: ElementType) -> XlaOp<'_> {
    operand.builder().record("bitcast-convert", &[operand], |emit, operands| {
        let result = bitcast_convert_shape(&operands[0].shape, new_element_type)?;
        Ok(emit.emit(Opcode::BitcastConvert, &[operands[0].id], result))
    })
}
