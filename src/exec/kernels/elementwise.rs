//! Element-wise kernels: unary, binary, compare, select, clamp, convert.

use crate::exec::element::{convert, Element};
use crate::exec::kernels::map_elements;
use crate::exec::strided::View;
use crate::hlo::{BinaryOp, ComparisonDirection, UnaryOp};
use crate::shape::element_type::with_native_type;
use crate::{Literal, Result, Shape};

/// `op` applied to one element.
pub(crate) fn unary_element<T: Element>(op: UnaryOp, x: T) -> T {
    use UnaryOp::*;
    match op {
        Neg => Element::neg(x),
        Abs => Element::abs(x),
        Sign => Element::sign(x),
        Not => Element::not(x),
        Exp => Element::exp(x),
        Log => Element::log(x),
        Log1p => Element::log1p(x),
        Expm1 => Element::expm1(x),
        Tanh => Element::tanh(x),
        Logistic => Element::logistic(x),
        Sqrt => Element::sqrt(x),
        Rsqrt => Element::rsqrt(x),
        Floor => Element::floor(x),
        Ceil => Element::ceil(x),
        Round => Element::round(x),
        Sin => Element::sin(x),
        Cos => Element::cos(x),
        IsFinite => unreachable!("is-finite changes the element type; see unary()"),
    }
}

/// `op` applied to one pair of elements.
pub(crate) fn binary_element<T: Element>(op: BinaryOp, a: T, b: T) -> T {
    use BinaryOp::*;
    match op {
        Add => Element::add(a, b),
        Sub => Element::sub(a, b),
        Mul => Element::mul(a, b),
        Div => Element::div(a, b),
        Rem => Element::rem(a, b),
        Max => Element::maximum(a, b),
        Min => Element::minimum(a, b),
        Pow => Element::pow(a, b),
        Atan2 => Element::atan2(a, b),
        And => Element::and(a, b),
        Or => Element::or(a, b),
        Xor => Element::xor(a, b),
        ShiftLeft => a.shift_left(b),
        ShiftRightArithmetic => a.shift_right_arithmetic(b),
        ShiftRightLogical => a.shift_right_logical(b),
    }
}

/// A comparison of one pair of elements (IEEE: every comparison with NaN is false but `NE`).
pub(crate) fn compare_element<T: Element>(direction: ComparisonDirection, a: T, b: T) -> bool {
    use ComparisonDirection::*;
    match direction {
        Eq => a == b,
        Ne => a != b,
        Ge => a >= b,
        Gt => a > b,
        Le => a <= b,
        Lt => a < b,
    }
}

/// Views of operands that have the output's dimensions (each in its own layout).
fn same_dimension_views(inputs: &[&Literal]) -> Vec<View> {
    inputs.iter().map(|l| View::of(l.shape())).collect()
}

/// A unary op.
pub(crate) fn unary(op: UnaryOp, input: &Literal, out: &mut Literal, parallel: bool) -> Result<()> {
    let views = same_dimension_views(&[input]);
    let shape = out.shape().clone();
    with_native_type!(input.element_type(), T => {
        let x = input.memory::<T>()?;
        if op == UnaryOp::IsFinite {
            let out = out.storage_mut().as_mut_slice::<bool>()?;
            map_elements(&shape, out, &views, parallel, |o| x[o[0]].is_finite());
        } else {
            let out = out.storage_mut().as_mut_slice::<T>()?;
            map_elements(&shape, out, &views, parallel, |o| unary_element(op, x[o[0]]));
        }
    });
    Ok(())
}

/// A binary op on operands of the output's dimensions and type.
pub(crate) fn binary(op: BinaryOp, inputs: [&Literal; 2], out: &mut Literal, parallel: bool) -> Result<()> {
    let views = same_dimension_views(&inputs);
    let shape = out.shape().clone();
    with_native_type!(shape.element_type(), T => {
        let (a, b) = (inputs[0].memory::<T>()?, inputs[1].memory::<T>()?);
        let out = out.storage_mut().as_mut_slice::<T>()?;
        map_elements(&shape, out, &views, parallel, |o| binary_element(op, a[o[0]], b[o[1]]));
    });
    Ok(())
}

/// A comparison, into `pred`.
pub(crate) fn compare(
    direction: ComparisonDirection,
    inputs: [&Literal; 2],
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    let views = same_dimension_views(&inputs);
    let shape = out.shape().clone();
    with_native_type!(inputs[0].element_type(), T => {
        let (a, b) = (inputs[0].memory::<T>()?, inputs[1].memory::<T>()?);
        let out = out.storage_mut().as_mut_slice::<bool>()?;
        map_elements(&shape, out, &views, parallel, |o| compare_element(direction, a[o[0]], b[o[1]]));
    });
    Ok(())
}

/// `select(pred, on_true, on_false)`.
pub(crate) fn select(inputs: [&Literal; 3], out: &mut Literal, parallel: bool) -> Result<()> {
    let views = same_dimension_views(&inputs);
    let shape = out.shape().clone();
    let pred = inputs[0].memory::<bool>()?;
    with_native_type!(shape.element_type(), T => {
        let (t, f) = (inputs[1].memory::<T>()?, inputs[2].memory::<T>()?);
        let out = out.storage_mut().as_mut_slice::<T>()?;
        map_elements(&shape, out, &views, parallel, |o| if pred[o[0]] { t[o[1]] } else { f[o[2]] });
    });
    Ok(())
}

/// `clamp(min, x, max)`: `min(max(x, min), max)`, so `max` wins where `min > max`.
pub(crate) fn clamp(inputs: [&Literal; 3], out: &mut Literal, parallel: bool) -> Result<()> {
    let views = same_dimension_views(&inputs);
    let shape = out.shape().clone();
    with_native_type!(shape.element_type(), T => {
        let (lo, x, hi) = (inputs[0].memory::<T>()?, inputs[1].memory::<T>()?, inputs[2].memory::<T>()?);
        let out = out.storage_mut().as_mut_slice::<T>()?;
        map_elements(&shape, out, &views, parallel, |o| Element::minimum(Element::maximum(x[o[1]], lo[o[0]]), hi[o[2]]));
    });
    Ok(())
}

/// `convert` to the output's element type.
pub(crate) fn convert_kernel(input: &Literal, out: &mut Literal, parallel: bool) -> Result<()> {
    let views = same_dimension_views(&[input]);
    let shape: Shape = out.shape().clone();
    with_native_type!(input.element_type(), S => {
        let x = input.memory::<S>()?;
        with_native_type!(shape.element_type(), D => {
            let out = out.storage_mut().as_mut_slice::<D>()?;
            map_elements(&shape, out, &views, parallel, |o| convert::<S, D>(x[o[0]]));
        })
    });
    Ok(())
}
