//! Element-wise ops: unary, binary (with XLA's broadcasting), compare, select, clamp, convert.

use crate::attributes::{BinaryOp, UnaryOp};
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::Shape;
use crate::shape_inference::broadcast::{degenerate_broadcast_shape, in_dim_broadcast_shape};
use crate::shape_inference::{
    compatible_ignoring_fp_precision, higher_precision, same_type_ignoring_fp_precision,
};

/// XLA's `InferUnaryOpShape`: which element types each unary op takes, and its result shape
/// (the operand's, layout included; `pred` for `is-finite`).
pub(crate) fn unary_shape(op: UnaryOp, operand: &Shape) -> Result<Shape> {
    use UnaryOp::*;
    let t = operand.element_type();
    let name = op.hlo_name();
    let type_name = t.primitive_type_name();
    match op {
        Floor | Ceil | Round | RoundNearestEven if !t.is_float() => invalid_argument!(
            "Expected element type in shape to be floating for {name} operation; got {type_name}."
        ),
        Exp | Log | Log1p | Expm1 | Tanh | Logistic | Sqrt | Rsqrt | Cbrt | Sin | Cos | Tan if !t.is_float() => {
            invalid_argument!(
                "Expected element type in shape to be floating or complex for {name} operation; got {type_name}."
            )
        }
        Abs if !(t.is_float() || t.is_signed_integral()) => invalid_argument!(
            "Expected element type in shape to be floating or complex for {name} operation; got {type_name}."
        ),
        Sign if !(t.is_float() || t.is_signed_integral()) => invalid_argument!(
            "Expected element type in shape to be signed or complex for {name} operation; got {type_name}."
        ),
        Neg if !(t.is_float() || t.is_integral()) => invalid_argument!(
            "Expected element type in shape to be integral, floating or complex for {name} operation; got {type_name}."
        ),
        Not if !(t == ElementType::Pred || t.is_integral()) => invalid_argument!(
            "Expected pred or an integral element type in argument to Not operation; got {type_name}."
        ),
        Erf if !t.is_float() => invalid_argument!(
            "Expected element type in shape to be floating for {name} operation; got {type_name}."
        ),
        Clz if !t.is_integral() => invalid_argument!(
            "Expected an integral element type in argument to Clz operation; got {type_name}."
        ),
        PopulationCount if !t.is_integral() => invalid_argument!(
            "Expected an integral element type in argument to PopulationCount operation; got {type_name}."
        ),
        ReducePrecision { .. } if !t.is_float() => invalid_argument!(
            "Expected element type in shape to be floating point for ReducePrecision operation; got {type_name}."
        ),
        ReducePrecision { exponent_bits, .. } if exponent_bits < 1 => {
            invalid_argument!("Expected exponent_bits >= 1; got {exponent_bits}.")
        }
        ReducePrecision { mantissa_bits, .. } if mantissa_bits < 0 => {
            invalid_argument!("Expected non-negative mantissa_bits; got {mantissa_bits}.")
        }
        IsFinite if !t.is_float() => invalid_argument!(
            "Expected element type in shape to be floating point for IsFinite operation; got {type_name}."
        ),
        IsFinite => Ok(operand.with_element_type(ElementType::Pred)),
        _ => Ok(operand.clone()),
    }
}

/// XLA's `InferBinaryOpShape` for the arithmetic and logical ops: the per-op element-type
/// checks, then [`elementwise_binary_shape`]. Shifts are also checked for integer types here
/// (XLA's builder lets floats through and fails at compile time).
pub(crate) fn binary_shape(
    op: BinaryOp,
    lhs: &Shape,
    rhs: &Shape,
    broadcast_dimensions: &[i64],
) -> Result<Shape> {
    use BinaryOp::*;
    let name = op.hlo_name();
    let (l, r) = (lhs.element_type(), rhs.element_type());
    match op {
        Sub | Atan2 | Pow | Div | Rem | ShiftLeft | ShiftRightArithmetic | ShiftRightLogical
            if l == ElementType::Pred || r == ElementType::Pred =>
        {
            invalid_argument!(
                "Expected element type in shape to be arithmetic type for operation {name}; got PRED."
            )
        }
        And | Or | Xor if !(l == ElementType::Pred || l.is_integral()) => invalid_argument!(
            "Expected pred or integral type in argument to and/or operation; got {}.",
            l.primitive_type_name()
        ),
        Atan2 if same_type_ignoring_fp_precision(l, r) && !l.is_float() => invalid_argument!(
            "Expected input element type to be floating or complex for {name} operation; got {}.",
            l.primitive_type_name()
        ),
        _ => {}
    }
    let result = elementwise_binary_shape(name, lhs, rhs, broadcast_dimensions)?;
    let t = result.element_type();
    match op {
        ShiftLeft | ShiftRightArithmetic | ShiftRightLogical if !t.is_integral() => invalid_argument!(
            "Expected integral type in argument to {name} operation; got {}.",
            t.primitive_type_name()
        ),
        _ => Ok(result),
    }
}

/// XLA's `InferBinaryOpShape` for `compare`: the broadcast shape with element type `pred`.
pub(crate) fn compare_shape(lhs: &Shape, rhs: &Shape, broadcast_dimensions: &[i64]) -> Result<Shape> {
    Ok(elementwise_binary_shape("compare", lhs, rhs, broadcast_dimensions)?
        .with_element_type(ElementType::Pred))
}

/// XLA's `InferElementwiseBinaryOpShape`: element types, then equal shapes (lhs layout kept),
/// degenerate broadcasting of equal ranks, or in-dim broadcasting of the lower-rank operand
/// followed by degenerate broadcasting.
pub(crate) fn elementwise_binary_shape(
    op_name: &str,
    lhs: &Shape,
    rhs: &Shape,
    broadcast_dimensions: &[i64],
) -> Result<Shape> {
    if !same_type_ignoring_fp_precision(lhs.element_type(), rhs.element_type()) {
        invalid_argument!(
            "Binary op {op_name} with different element types: {} and {}.",
            lhs.human_string(),
            rhs.human_string()
        );
    }
    let element_type = higher_precision(lhs.element_type(), rhs.element_type());
    if lhs.rank() == rhs.rank() && !broadcast_dimensions.is_empty() {
        let identity: Vec<i64> = (0..lhs.rank() as i64).collect();
        if broadcast_dimensions != identity.as_slice() {
            invalid_argument!(
                "Broadcast dimensions field must either be not set or be the identity on binary \
                 operations with operands of the same rank."
            );
        }
    }
    if lhs.dimensions() == rhs.dimensions() {
        return Ok(lhs.with_element_type(element_type));
    }
    if lhs.rank() == rhs.rank() {
        return degenerate_broadcast_shape(lhs, rhs, element_type);
    }
    let (smaller, larger) = if lhs.rank() < rhs.rank() { (lhs, rhs) } else { (rhs, lhs) };
    let in_dim = in_dim_broadcast_shape(smaller, larger, broadcast_dimensions)?;
    degenerate_broadcast_shape(&in_dim, larger, element_type)
}

/// XLA's `InferSelectShape`, after the builder has broadcast scalar arguments: the result has
/// the pred's dimensions and layout and the branches' (promoted) element type.
pub(crate) fn select_shape(pred: &Shape, on_true: &Shape, on_false: &Shape) -> Result<Shape> {
    if !compatible_ignoring_fp_precision(on_true, on_false) {
        invalid_argument!(
            "Operands to select must be the same shape; got {} and {}.",
            on_true.human_string(),
            on_false.human_string()
        );
    }
    if pred.element_type() != ElementType::Pred {
        invalid_argument!("Select's pred operand must have PRED element type; got {}.", pred.human_string());
    }
    if pred.dimensions() != on_true.dimensions() {
        invalid_argument!(
            "Operands to select and predicate must be the same shape; got {} and {}.",
            on_true.human_string(),
            pred.human_string()
        );
    }
    Ok(pred.with_element_type(higher_precision(on_true.element_type(), on_false.element_type())))
}

/// XLA's `InferClampShape`, after the builder has broadcast scalar arguments: the operand's
/// shape.
pub(crate) fn clamp_shape(min: &Shape, operand: &Shape, max: &Shape) -> Result<Shape> {
    let text = || format!("{}, {}, {}", min.human_string(), operand.human_string(), max.human_string());
    if min.dimensions() != operand.dimensions() || max.dimensions() != operand.dimensions() {
        invalid_argument!("Clamp with different shapes: {}.", text());
    }
    if !compatible_ignoring_fp_precision(min, operand) || !compatible_ignoring_fp_precision(max, operand) {
        invalid_argument!("Clamp with incompatible element types: {}.", text());
    }
    Ok(operand.clone())
}

/// XLA's `InferConvertShape`: the operand's shape (layout included) with the new type; a tuple
/// cannot be converted.
pub(crate) fn convert_shape(operand: &Shape, new_element_type: ElementType) -> Result<Shape> {
    if operand.is_tuple() {
        invalid_argument!(
            "Convert does not allow non-arrays, so cannot convert from {} to {}.",
            operand.human_string(),
            new_element_type.primitive_type_name()
        );
    }
    Ok(operand.with_element_type(new_element_type))
}
